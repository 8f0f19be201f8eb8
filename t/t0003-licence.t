#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-or-later
#
# t0003-licence.t: the licence is in the tree and every source file says so.
#
# LICENSE holds the LGPL-3.0 text and COPYING.GPL-3 the GPL-3.0 it builds
# on; every source file under src/ and t/ opens with the SPDX line that
# etc/spdx-add.sh writes (its --check mode lists the files without it).

test_description='licence: LICENSE, and an SPDX line in every source file'

. "$(dirname "$0")/sharness.sh"

SPDX="$BGN_TOP_SRCDIR/etc/spdx-add.sh"

test_expect_success 'LICENSE is the LGPL-3.0, COPYING.GPL-3 the GPL-3.0' '
	head -n 2 "$BGN_TOP_SRCDIR/LICENSE" >lic.head &&
	grep "GNU LESSER GENERAL PUBLIC LICENSE" lic.head &&
	grep "Version 3, 29 June 2007" lic.head &&
	head -n 2 "$BGN_TOP_SRCDIR/COPYING.GPL-3" | grep "GNU GENERAL PUBLIC LICENSE"
'

# A scratch tree (no git: the script falls back to find) with one file of
# each kind, none with the line, and one data file it must not touch.
test_expect_success 'spdx-add.sh --check catches source files without the line' '
	mkdir -p scratch/src/lib scratch/t &&
	printf "/* a.c: nothing */\nint a;\n" >scratch/src/lib/a.c &&
	printf "#!/bin/sh\necho hi\n" >scratch/t/t9999-x.t &&
	chmod +x scratch/t/t9999-x.t &&
	printf "x = 1\n" >scratch/src/lib/b.py &&
	printf "SUBDIRS = lib\n" >scratch/src/Makefile.am &&
	printf "[a]\nb = 1\n" >scratch/t/data.toml &&
	test_must_fail "$SPDX" -C scratch --check src t >check.out &&
	cat check.out &&
	test $(wc -l <check.out) -eq 4 &&
	grep "^src/lib/a.c: no " check.out &&
	grep "^t/t9999-x.t: no " check.out &&
	grep "^src/lib/b.py: no " check.out &&
	grep "^src/Makefile.am: no " check.out
'

test_expect_success 'spdx-add.sh adds the line in each style, once' '
	"$SPDX" -C scratch src t >add.out &&
	test $(wc -l <add.out) -eq 4 &&
	head -n 1 scratch/src/lib/a.c >a.1 &&
	echo "/* SPDX-License-Identifier: LGPL-3.0-or-later */" >a.want &&
	test_cmp a.want a.1 &&
	sed -n 2p scratch/src/lib/a.c | grep "^/\* a.c: nothing \*/$" &&
	head -n 2 scratch/t/t9999-x.t >x.2 &&
	printf "#!/bin/sh\n# SPDX-License-Identifier: LGPL-3.0-or-later\n" >x.want &&
	test_cmp x.want x.2 &&
	test -x scratch/t/t9999-x.t &&
	head -n 1 scratch/src/lib/b.py | grep "^# SPDX-License-Identifier: LGPL-3.0-or-later$" &&
	head -n 1 scratch/src/Makefile.am | grep "^# SPDX-License-Identifier: LGPL-3.0-or-later$" &&
	printf "[a]\nb = 1\n" >data.want &&
	test_cmp data.want scratch/t/data.toml &&
	"$SPDX" -C scratch --check src t &&
	cp -r scratch again &&
	"$SPDX" -C again src t >again.out &&
	test_must_be_empty again.out &&
	diff -r scratch again
'

# Fails until etc/spdx-add.sh has been run on the tree (and committed).
test_expect_success 'every source file under src/ and t/ has the SPDX line' '
	"$SPDX" --check src t >tree.out 2>&1 ||
	{ cat tree.out; false; }
'

test_done

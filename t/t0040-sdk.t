#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-or-later
test_description='the installed SDK: headers, libbgn, bgn.pc, out-of-tree module and client

make install DESTDIR=... lays down include/bgn/{module,message,client}.h,
libbgn.so.0 and bgn.pc and no libtool .la file for modules.  A module
(t/sdk/hello-module.c) and a client (t/sdk/hello-client.c) are compiled
with nothing but the installed files through pkg-config, then the module
is loaded into a two-broker instance (broker.modules) and into a single
broker (--module), and the client talks to it across the overlay.'

. "$(dirname "$0")/sharness.sh"

CC=${CC:-cc}
SDK_SRC=$BGN_TOP_SRCDIR/t/sdk
# DESTDIR outside the trash directory: its name has a space in it.
DEST=$(mktemp -d /tmp/bgnsdk$$.XXXXXX) || exit 1
trap 'rc=$?; rm -rf "$DEST"; (exit $rc); die' EXIT
trap 'exit 130' INT TERM

if ! command -v pkg-config >/dev/null 2>&1; then
	skip_all='pkg-config not found (apt-get install pkg-config)'
	test_done
fi

test_expect_success 'make install DESTDIR= lays down the SDK' '
	# not the jobserver of a "make -j check" that runs this test
	env -u MAKEFLAGS -u MFLAGS make -C "$BGN_TOP_BUILDDIR" install DESTDIR="$DEST" >install.log 2>&1 ||
		{ tail -20 install.log; false; } &&
	pc=$(find "$DEST" -name bgn.pc) &&
	test -n "$pc" &&
	grep "^prefix=/" "$pc" &&
	mkdir pc &&
	sed "s|^prefix=|prefix=$DEST|" "$pc" >pc/bgn.pc
'

# pkg-config reads the installed bgn.pc, its prefix moved under DESTDIR
# (what a staged install is used as before packaging).
PKG_CONFIG_PATH=$PWD/pc
export PKG_CONFIG_PATH

test_expect_success 'bgn.pc names the installed headers, library and modules' '
	pkg-config --modversion bgn >version &&
	sed -n "s/^#define PACKAGE_VERSION \"\(.*\)\"$/\1/p" \
		"$BGN_TOP_BUILDDIR/config/config.h" >expect.version &&
	grep -E "^[0-9]+\.[0-9]+\.[0-9]+" expect.version &&
	test_cmp expect.version version &&
	inc=$(pkg-config --variable=includedir bgn) &&
	libdir=$(pkg-config --variable=libdir bgn) &&
	test -f "$inc/bgn/module.h" &&
	test -f "$inc/bgn/message.h" &&
	test -f "$inc/bgn/client.h" &&
	test -L "$libdir/libbgn.so" &&
	test -f "$libdir/libbgn.so.0" &&
	test -f "$(pkg-config --variable=moduledir bgn)/overlay-bgn.so" &&
	pkg-config --cflags --libs bgn >flags &&
	grep -- "-I$inc .*-L$libdir -lbgn" flags
'

test_expect_success 'no libtool .la file in the module directory' '
	moddir=$(pkg-config --variable=moduledir bgn) &&
	ls "$moddir" >modules.list &&
	cat modules.list &&
	! grep "\.la$" modules.list
'

test_expect_success 'libbgn exports only bgn_* and msg_* and is versioned' '
	libdir=$(pkg-config --variable=libdir bgn) &&
	objdump -p "$libdir/libbgn.so" | grep "SONAME *libbgn\.so\.0$" &&
	nm -D --defined-only "$libdir/libbgn.so" | awk "{print \$3}" >syms &&
	grep "^bgn_open$" syms && grep "^msg_get_topic$" syms &&
	! grep -v "^bgn_\|^msg_" syms
'

test_expect_success 'each installed header compiles on its own' '
	for h in module.h message.h client.h; do
		printf "#include <bgn/%s>\nint main (void) { return 0; }\n" $h \
			>only-$h.c &&
		$CC -std=c99 -Wall -Werror -c -o only-$h.o only-$h.c \
			$(pkg-config --cflags bgn) || return 1
	done &&
	! grep -r "src/" "$(pkg-config --variable=includedir bgn)/bgn"
'

test_expect_success 'an out-of-tree module builds against the SDK' '
	libdir=$(pkg-config --variable=libdir bgn) &&
	$CC -std=c99 -Wall -Wextra -Werror -shared -fPIC -o hello.so \
		"$SDK_SRC/hello-module.c" $(pkg-config --cflags --libs bgn) \
		-Wl,-rpath,"$libdir" &&
	nm -D --defined-only hello.so | grep " bgn_module_entry$"
'

test_expect_success 'an out-of-tree client builds against the SDK' '
	libdir=$(pkg-config --variable=libdir bgn) &&
	$CC -std=c99 -Wall -Wextra -Werror -o hello-client \
		"$SDK_SRC/hello-client.c" $(pkg-config --cflags --libs bgn) \
		-Wl,-rpath,"$libdir" &&
	ldd hello-client | grep "libbgn\.so\.0 => $DEST"
'

test_expect_success 'the module serves a 2-broker instance (broker.modules)' '
	bgn start --size=2 -o "broker.modules=[\"$PWD/hello.so\"]" sh -c "
		./hello-client 1 hello.greet \"{\\\"name\\\":\\\"sdk\\\"}\" &&
		./hello-client 1 hello.greet \"{\\\"name\\\":\\\"again\\\"}\" &&
		./hello-client 0 hello.greet \"{\\\"name\\\":\\\"zero\\\"}\" &&
		! ./hello-client 1 hello.other" >hello.out &&
	cat hello.out &&
	cat >hello.expected <<-\EOT &&
	{"greeting":"hello, sdk","count":1}
	{"greeting":"hello, again","count":2}
	{"greeting":"hello, zero","count":1}
	error: hello: only hello.greet is served
	EOT
	test_cmp hello.expected hello.out
'

test_expect_success 'bgn-broker --module loads it by path' '
	rd=$(mktemp -d /tmp/bgnsdkrd.XXXXXX) || return 1
	bgn-broker --overlay=none --module="$PWD/hello.so" -v \
		--rundir="$rd/r" >single.out 2>single.err &
	pid=$! &&
	test_when_finished "kill $pid 2>/dev/null; rm -rf $rd" &&
	i=0 && while ! test -S "$rd/r/local" && test $i -lt 200; do
		sleep 0.05; i=$((i+1)); done &&
	test_must_fail env BGN_URI=ipc://$rd/r/local \
		./hello-client 0 hello.greet "{}" >bad.out &&
	bgn --uri=ipc://$rd/r/local rpc broker.module-list >modlist.json &&
	bgn --uri=ipc://$rd/r/local rpc broker.shutdown &&
	wait $pid &&
	cat single.err bad.out &&
	grep "hello module loaded" single.err &&
	jq_py modlist.json "{\"name\": \"hello\", \"description\": \"SDK test module: the hello service\", \"path\": \"$PWD/hello.so\"} in o[\"modules\"]" &&
	grep "error: hello: payload needs a \"name\" string" bad.out
'

test_expect_success 'a module that is not there is a clear error' '
	test_expect_code 2 bgn-broker --overlay=none \
		--module=/nonexistent/x.so >missing.out 2>&1 &&
	grep "module /nonexistent/x.so: not found" missing.out
'

test_done

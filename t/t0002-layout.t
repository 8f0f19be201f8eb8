#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-or-later
#
# t0002-layout.t: the source layout rules the README states.
#
# The overlay's protocol core must run without sockets (the unit tests
# and the simulator link it alone), its parts must call downward only
# (overlay.h's opening comment lists the layering), touch no other part's
# state, and no include circle may creep in anywhere, nor an overlay file
# grow past its size limit; t/scripts/layout.py checks the sources, the
# link of the core's unit tests checks the build.  The README's map
# names every folder and file of the tree, src/, t/, doc/, etc/, .ci/,
# config/ and the top level alike (t/scripts/readmemap.py, against the
# files git knows), and no file points at one the tree does not have
# (t/scripts/docrefs.py).

test_description='source layout: include circles, layering, a sans-I/O core'

. "$(dirname "$0")/sharness.sh"

PY=${PYTHON3:-python3}
MAP="$BGN_TOP_SRCDIR/t/scripts/readmemap.py"
REFS="$BGN_TOP_SRCDIR/t/scripts/docrefs.py"

# The files of the tree are the ones git knows (tracked, or new and not
# ignored); a release tarball has no git and no need of this check.
# (A tarball unpacked inside a clone, as make distcheck does, is no git
# tree of its own: only a work tree whose top is the source counts.)
top=$(git -C "$BGN_TOP_SRCDIR" rev-parse --show-toplevel 2>/dev/null)
if test -n "$top" &&
   test "$(cd "$top" && pwd -P)" = "$(cd "$BGN_TOP_SRCDIR" && pwd -P)"
then
	test_set_prereq GITTREE
fi

test_expect_success 'no include circles, the parts layered, ZeroMQ only in sock.c and curve.c' '
	"$PY" "$BGN_TOP_SRCDIR/t/scripts/layout.py" "$BGN_TOP_SRCDIR" >layout.out 2>&1 ||
	{ cat layout.out; false; }
'

test_expect_success 'the checker catches a part that calls upward, touches another'"'"'s state or includes the hub' '
	mkdir -p bad/src/modules/overlay &&
	cp "$BGN_TOP_SRCDIR"/src/modules/overlay/*.[ch] bad/src/modules/overlay/ &&
	echo "#include \"hello.h\"" >>bad/src/modules/overlay/route.c &&
	echo "static void f (void) { gettimeofday (0, 0); }" >>bad/src/modules/overlay/fence.c &&
	echo "static void route_bad (struct overlay *ov) { ov->fence.nfenced = 0; }" \
		>>bad/src/modules/overlay/route.c &&
	echo "static int route_peek (struct overlay *ov) { return ov->health.acked; }" \
		>>bad/src/modules/overlay/route.c &&
	echo "#include \"overlay.h\"" >>bad/src/modules/overlay/module.c &&
	echo "#include \"overlay.h\"" >>bad/src/modules/overlay/trace.h &&
	test_must_fail "$PY" "$BGN_TOP_SRCDIR/t/scripts/layout.py" bad >bad.out &&
	cat bad.out &&
	grep "route.c: includes hello.h, a part above it" bad.out &&
	grep "fence.c: the protocol core calls gettimeofday()" bad.out &&
	grep "^overlay/route.c:[0-9]*: writes ov->fence, the state of fence.c$" bad.out &&
	grep "^overlay/route.c:[0-9]*: reads ov->health, the state of health.c$" bad.out &&
	grep "^overlay/module.c: includes overlay.h, the hub" bad.out &&
	grep "^overlay/trace.h: includes overlay.h, the hub" bad.out
'

# A made-up core: its overlay.h lists the layering (a above b
# and c, which share a line, above d) and marks a_state as a.c's.
test_expect_success 'the checker catches an upward call, a call cycle and a foreign field' '
	mkdir -p tiny/src/modules/overlay &&
	(cd tiny/src/modules/overlay &&
	 printf "%s\n" "/* SPDX-License-Identifier: LGPL-3.0-or-later */" \
		"/* overlay.h: a made-up core." " *" \
		" *   overlay.c   the coordinator" " *   a.c         a part" \
		" *   b.c, c.c    two parts on one line" " *   d.c         the bottom" \
		" *" " * d.c is the bottom." " */" \
		"struct a_state {   /* a.c */" "    int x;" "};" \
		"struct overlay {" "    struct a_state a;" "};" >overlay.h &&
	 printf "%s\n" "#include \"overlay.h\"" \
		"int top (struct overlay *ov) { return a_f (ov) + ov->a.x; }" \
		>overlay.c &&
	 printf "%s\n" "#include \"overlay.h\"" \
		"int a_f (struct overlay *ov) { ov->a.x++; return b_g () + ov->a.x; }" \
		>a.c &&
	 printf "%s\n" "int b_g (void) { return c_h (); }" \
		"int b_k (void) { return 1; }" >b.c &&
	 printf "%s\n" "#include \"overlay.h\"" \
		"int c_h (void) { return b_k (); }" \
		"int c_read (struct overlay *ov) { return ov->a.x; }" \
		"void c_write (struct overlay *ov) { ov->a.x = 2; }" >c.c &&
	 printf "%s\n" "int a_f (void *ov);" \
		"int d_f (void *ov) { return ov ? a_f (ov) : 0; }" >d.c) &&
	test_must_fail "$PY" "$BGN_TOP_SRCDIR/t/scripts/layout.py" tiny >tiny.out &&
	cat tiny.out &&
	test $(wc -l <tiny.out) -eq 4 &&
	grep "^overlay/d.c: d_f() calls a_f() of a, a part above it$" tiny.out &&
	grep "^overlay: call cycle: b.c -> c.c -> b.c$" tiny.out &&
	grep "^overlay/c.c:3: reads ov->a, the state of a.c$" tiny.out &&
	grep "^overlay/c.c:4: writes ov->a, the state of a.c$" tiny.out
'

test_expect_success 'the coordinator reads a part'"'"'s state (above), it writes none' '
	cp -R tiny tiny2 &&
	echo "void top_set (struct overlay *ov) { ov->a.x = 0; }" \
		>>tiny2/src/modules/overlay/overlay.c &&
	test_must_fail "$PY" "$BGN_TOP_SRCDIR/t/scripts/layout.py" tiny2 >tiny2.out &&
	cat tiny2.out &&
	test $(wc -l <tiny2.out) -eq 5 &&
	grep "^overlay/overlay.c:3: writes ov->a, the state of a.c$" tiny2.out
'

# The same core with a.c's state in its own header, as the real parts
# keep theirs (overlay.h includes it); without its mark, it is caught.
test_expect_success 'a part'"'"'s state in its own header is still its own' '
	cp -R tiny tiny3 &&
	(cd tiny3/src/modules/overlay &&
	 printf "%s\n" "/* SPDX-License-Identifier: LGPL-3.0-or-later */" \
		"/* overlay.h: a made-up core." " *" \
		" *   overlay.c   the coordinator" " *   a.c         a part" \
		" *   b.c, c.c    two parts on one line" " *   d.c         the bottom" \
		" *" " * d.c is the bottom." " */" "#include \"a.h\"" \
		"struct overlay {" "    struct a_state a;" "};" >overlay.h &&
	 printf "%s\n" "/* SPDX-License-Identifier: LGPL-3.0-or-later */" \
		"struct a_state {   /* a.c */" "    int x;" "};" >a.h) &&
	test_must_fail "$PY" "$BGN_TOP_SRCDIR/t/scripts/layout.py" tiny3 >tiny3.out &&
	cat tiny3.out &&
	test_cmp tiny.out tiny3.out &&
	sed -i "s|   /\* a.c \*/||" tiny3/src/modules/overlay/a.h &&
	test_must_fail "$PY" "$BGN_TOP_SRCDIR/t/scripts/layout.py" tiny3 >tiny4.out &&
	cat tiny4.out &&
	test $(wc -l <tiny4.out) -eq 3 &&
	grep "^overlay/overlay.h: struct overlay'"'"'s a (struct a_state) has no owner mark$" tiny4.out
'

# Rule 11: a part writes only its own sub-struct of a peer (peer.h marks
# each with its owner); reading another'"'"'s is fine.
test_expect_success 'the checker catches a part writing another'"'"'s facts about a peer' '
	mkdir -p pbad/src/modules/overlay &&
	cp "$BGN_TOP_SRCDIR"/src/modules/overlay/*.[ch] pbad/src/modules/overlay/ &&
	"$PY" "$BGN_TOP_SRCDIR/t/scripts/layout.py" pbad &&
	printf "%s\n" \
		"static void moved_w1 (struct peer *p) { p->hello.refused = false; }" \
		"static void moved_w2 (struct peer *p) { ++p->route.tx_msgs; }" \
		"static void moved_w3 (struct peer *p) { p->fence.told += 1; }" \
		"static void moved_w4 (struct peer *p) { snprintf (p->hello.version, 2, \"x\"); }" \
		"static int moved_r (struct peer *p) { return p->hello.refused == 0 && p->live.rtt_us <= 1; }" \
		"static void moved_own (struct peer *p) { p->moved.sent = 0; }" \
		>>pbad/src/modules/overlay/moved.c &&
	test_must_fail "$PY" "$BGN_TOP_SRCDIR/t/scripts/layout.py" pbad >pbad.out &&
	cat pbad.out &&
	test $(wc -l <pbad.out) -eq 4 &&
	grep "^overlay/moved.c:[0-9]*: writes a peer'"'"'s hello\.\*, the facts of hello.c$" pbad.out &&
	grep "^overlay/moved.c:[0-9]*: writes a peer'"'"'s route\.\*, the facts of route.c$" pbad.out &&
	grep "^overlay/moved.c:[0-9]*: writes a peer'"'"'s fence\.\*, the facts of fence.c$" pbad.out &&
	sed -i "s|struct peer_hello {          /\* hello.c: admission \*/|struct peer_hello {|" \
		pbad/src/modules/overlay/peer.h &&
	test_must_fail "$PY" "$BGN_TOP_SRCDIR/t/scripts/layout.py" pbad >pbad2.out &&
	cat pbad2.out &&
	! grep "hello\.\*" pbad2.out
'

test_expect_success 'the checker catches the simulator reading the core'"'"'s insides' '
	mkdir -p sim/src/sim &&
	cp "$BGN_TOP_SRCDIR"/src/sim/*.[ch] sim/src/sim/ &&
	echo "#include \"src/modules/overlay/fence.h\"" >>sim/src/sim/simview.c &&
	test_must_fail "$PY" "$BGN_TOP_SRCDIR/t/scripts/layout.py" sim >sim.out &&
	grep "src/sim/simview.c: includes src/modules/overlay/fence.h, a header private to the overlay core" sim.out
'

test_expect_success 'the checker catches a host with its own copy of the routing or role rules' '
	mkdir -p hosts/src &&
	cp -r "$BGN_TOP_SRCDIR"/src/flux "$BGN_TOP_SRCDIR"/src/sim hosts/src/ &&
	"$PY" "$BGN_TOP_SRCDIR/t/scripts/layout.py" hosts >hosts-ok.out &&
	sed -i "s/routing_response (/my_response (/" hosts/src/sim/simbroker.c &&
	printf "%s\n" "static void cap (msg_t *m)" "{" \
		"    msg_set_rolemask (m, msg_get_rolemask (m) & ~MSG_ROLE_OWNER);" \
		"}" >>hosts/src/flux/fluxroute.c &&
	test_must_fail "$PY" "$BGN_TOP_SRCDIR/t/scripts/layout.py" hosts >hosts.out &&
	cat hosts.out &&
	test $(wc -l <hosts.out) -eq 2 &&
	grep "^src/sim: routes without libmsg'"'"'s routing_response (a copy of the routing rules?)$" hosts.out &&
	grep "^src/flux/fluxroute.c:[0-9]*: takes the owner role away itself" hosts.out
'

# Rule 10: a copy of the overlay whose route.c and overlay.c are padded
# to their limits passes, one line more fails.
pad_to () {
	yes "/* padding */" | head -n $(($2 - $(wc -l <"$1"))) >>"$1"
}
test_expect_success 'the checker catches an overlay file past its size limit' '
	mkdir -p big/src/modules/overlay &&
	cp "$BGN_TOP_SRCDIR"/src/modules/overlay/*.[ch] big/src/modules/overlay/ &&
	(cd big/src/modules/overlay && pad_to route.c 700 && pad_to overlay.c 900) &&
	"$PY" "$BGN_TOP_SRCDIR/t/scripts/layout.py" big >big-ok.out &&
	(cd big/src/modules/overlay && pad_to route.c 701 && pad_to overlay.c 901) &&
	test_must_fail "$PY" "$BGN_TOP_SRCDIR/t/scripts/layout.py" big >big.out &&
	cat big.out &&
	test $(wc -l <big.out) -eq 2 &&
	grep "^overlay/route.c: 701 lines, more than the limit of 700 (split it along a seam)$" big.out &&
	grep "^overlay/overlay.c: 901 lines, more than the limit of 900 (split it along a seam)$" big.out
'

# The list of known exceptions is empty; a copy of the checker with
# fence.c on it shows what an entry does: the file may be as long as it
# is, and once it is within its limit it must come off the list.
test_expect_success 'a known exception may be long; once short it must come off the list' '
	sed "s/^SIZE_EXCEPTIONS = set()$/SIZE_EXCEPTIONS = {\"fence.c\"}/" \
		"$BGN_TOP_SRCDIR/t/scripts/layout.py" >layout-exc.py &&
	grep "^SIZE_EXCEPTIONS = {\"fence.c\"}$" layout-exc.py &&
	mkdir -p exc/src/modules/overlay &&
	cp "$BGN_TOP_SRCDIR"/src/modules/overlay/*.[ch] exc/src/modules/overlay/ &&
	printf "%s\n" "/* SPDX-License-Identifier: LGPL-3.0-or-later */" \
		>exc/src/modules/overlay/fence.c &&
	test_must_fail "$PY" layout-exc.py exc >exc-short.out &&
	cat exc-short.out &&
	test $(wc -l <exc-short.out) -eq 1 &&
	grep "^overlay/fence.c: 1 lines, within the limit of 700: take it off SIZE_EXCEPTIONS" exc-short.out &&
	(cd exc/src/modules/overlay && pad_to fence.c 2000) &&
	"$PY" layout-exc.py exc >exc-long.out &&
	test_must_fail "$PY" "$BGN_TOP_SRCDIR/t/scripts/layout.py" exc >exc-real.out &&
	grep "^overlay/fence.c: 2000 lines, more than the limit of 700" exc-real.out
'

test_expect_success 'the core links without libzmq or czmq (its unit tests)' '
	core_test="$BGN_TOP_BUILDDIR/src/modules/overlay/test_route.t" &&
	if ! test -x "$core_test"; then
		make -C "$BGN_TOP_BUILDDIR/src/modules/overlay" test_route.t >/dev/null
	fi &&
	ldd "$core_test" >ldd.out &&
	test_must_fail grep -E "libzmq|libczmq" ldd.out
'

test_expect_success GITTREE 'the README map names every folder and file of the tree' '
	git -C "$BGN_TOP_SRCDIR" ls-files --cached --others --exclude-standard \
		>src.files &&
	test $(wc -l <src.files) -gt 100 &&
	grep -q "^t/t0002-layout.t$" src.files &&
	grep -q "^doc/bgn.1$" src.files &&
	grep -q "^.ci/run$" src.files &&
	"$PY" "$MAP" "$BGN_TOP_SRCDIR/README.md" <src.files >map.out 2>&1 ||
	{ cat map.out; false; }
'

test_expect_success GITTREE 'the map checker catches a file or a folder without a line' '
	{ cat src.files &&
	  printf "%s\n" src/broker/newpart.c src/newlib/newlib.c \
		src/common/libmsg/fuzz/new_fuzz.c; } >new.files &&
	test_must_fail "$PY" "$MAP" "$BGN_TOP_SRCDIR/README.md" <new.files >new.out &&
	cat new.out &&
	test $(wc -l <new.out) -eq 3 &&
	grep "^src/broker/newpart.c: a file the README map does not name$" new.out &&
	grep "^src/newlib/: a folder the README map does not name$" new.out &&
	grep "^src/newlib/newlib.c: a file the README map does not name$" new.out &&
	sed "s/\`hosts.c\` the rank/the rank/; s/\`pmi_fd.c\`/\`pmi_fdx.c\`/" \
		"$BGN_TOP_SRCDIR/README.md" >nohosts.md &&
	test_must_fail "$PY" "$MAP" nohosts.md <src.files >old.out &&
	cat old.out &&
	test $(wc -l <old.out) -eq 5 &&
	grep "^src/broker/hosts.c: a file the README map does not name$" old.out &&
	grep "^src/broker/hosts.h: a file the README map does not name$" old.out &&
	grep "^src/common/libpmi/pmi_fd.c: a file the README map does not name$" old.out &&
	grep "^src/common/libpmi/pmi_fd.h: a file the README map does not name$" old.out &&
	grep "^README map names pmi_fdx.c, which is not in the tree$" old.out
'

test_expect_success GITTREE 'the map checker looks beyond src/: tests, docs, etc/, .ci/, the top' '
	{ cat src.files &&
	  printf "%s\n" NEWS doc/new-guide.md etc/bgn.logrotate \
		t/t9999-new.t t/newdir/helper.sh t/toml/valid/new-case.toml \
		doc/img/new-figure.png; } >more.files &&
	test_must_fail "$PY" "$MAP" "$BGN_TOP_SRCDIR/README.md" <more.files >more.out &&
	cat more.out &&
	test $(wc -l <more.out) -eq 6 &&
	grep "^NEWS: a file the README map does not name$" more.out &&
	grep "^doc/new-guide.md: a file the README map does not name$" more.out &&
	grep "^etc/bgn.logrotate: a file the README map does not name$" more.out &&
	grep "^t/t9999-new.t: a file the README map does not name$" more.out &&
	grep "^t/newdir/: a folder the README map does not name$" more.out &&
	grep "^t/newdir/helper.sh: a file the README map does not name$" more.out
'

test_expect_success GITTREE 'the map checker catches a walk-through naming a function that was renamed' '
	mkdir -p renamed &&
	sed "s/evrepair_kick/evrepair_nudge/" "$BGN_TOP_SRCDIR/README.md" \
		>renamed/README.md &&
	grep "^src/\|^etc/" src.files >code.files &&
	(cd "$BGN_TOP_SRCDIR" && tar cf - -T -) <code.files | (cd renamed && tar xf -) &&
	test_must_fail "$PY" "$MAP" renamed/README.md <src.files >renamed.out &&
	cat renamed.out &&
	test $(wc -l <renamed.out) -eq 1 &&
	grep "^README map names .evrepair_nudge., which no file under src/ or etc/ holds (renamed?)$" renamed.out
'

test_expect_success GITTREE 'the map checker catches a line taken out, and a stale folder' '
	grep "^| \`.ci/\` |" "$BGN_TOP_SRCDIR/README.md" &&
	grep "\`t1400-security.t\` attacks" "$BGN_TOP_SRCDIR/README.md" &&
	sed -e "/^| \`.ci\/\` |/d" \
	    -e "s/\`t1400-security.t\` attacks/attacks/" \
	    -e "s/\`t\/sim\/\`,/\`t\/sims\/\`,/" \
		"$BGN_TOP_SRCDIR/README.md" >noci.md &&
	test_must_fail "$PY" "$MAP" noci.md <src.files >noci.out &&
	cat noci.out &&
	test $(wc -l <noci.out) -eq 5 &&
	grep "^.ci/: a folder the README map does not name$" noci.out &&
	grep "^.ci/run: a file the README map does not name$" noci.out &&
	grep "^t/t1400-security.t: a file the README map does not name$" noci.out &&
	grep "^t/sim/: a folder the README map does not name$" noci.out &&
	grep "^README map names t/sims/, a folder not in the tree$" noci.out
'

test_expect_success GITTREE 'no file points at a file outside the tree' '
	(cd "$BGN_TOP_SRCDIR" && "$PY" "$REFS" .) <src.files >refs.out 2>&1 ||
	{ cat refs.out; false; }
'

# The names a pointer out of the tree would use are written in pieces
# here, so that this file does not name them itself.
test_expect_success 'the pointer checker catches links and names of files elsewhere' '
	mkdir -p refs/doc refs/src &&
	printf "%s\n" "# x" "[the protocol](doc/proto.md), [gone](doc/gone.md)" \
		"[a page](https://example.org/x.md), [here](#x)" \
		"kept in ../sha""red/layout" >refs/README.md &&
	printf "%s\n" "# proto" "[back](../README.md), see later.md" \
		>refs/doc/proto.md &&
	printf "%s\n" ".TH X 1" ".I overlay\\-gone.md" >refs/doc/x.1 &&
	printf "%s\n" "/* why: see DES""IGN.md and not""es/ids.txt */" \
		"/* the overlay-lay""out note */" >refs/src/a.c &&
	printf "%s\n" README.md doc/proto.md doc/x.1 src/a.c >refs.files &&
	test_must_fail "$PY" "$REFS" refs <refs.files >bad-refs.out &&
	cat bad-refs.out &&
	test $(wc -l <bad-refs.out) -eq 8 &&
	grep "^README.md:2: links to doc/gone.md, which is not in the tree$" bad-refs.out &&
	grep "^README.md:2: names doc/gone.md, which is not in the tree$" bad-refs.out &&
	grep "^README.md:4: names a folder beside the repository$" bad-refs.out &&
	grep "^doc/proto.md:2: names later.md, which is not in the tree$" bad-refs.out &&
	grep "^doc/x.1:2: names overlay-gone.md, which is not in the tree$" bad-refs.out &&
	grep "^src/a.c:1: names design notes outside the tree$" bad-refs.out &&
	grep "^src/a.c:1: names a notes folder outside the tree$" bad-refs.out &&
	grep "^src/a.c:2: names a layout note outside the tree$" bad-refs.out
'

test_done

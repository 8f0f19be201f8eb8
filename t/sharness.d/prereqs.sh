# SPDX-License-Identifier: LGPL-3.0-or-later
# Prerequisites for optional tests.
if test -n "$MPIEXEC" && test -x "$MPIEXEC"; then
    test_set_prereq MPIEXEC
fi
if test -n "$PYTHON3" && "$PYTHON3" -c "" 2>/dev/null; then
    test_set_prereq PYTHON3
fi
if command -v dot >/dev/null 2>&1; then
    test_set_prereq DOT
fi
if test "$(id -u)" = 0 && command -v ip >/dev/null 2>&1 && command -v nft >/dev/null 2>&1; then
    test_set_prereq ROOT_NETNS
fi

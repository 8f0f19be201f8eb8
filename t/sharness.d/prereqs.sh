# SPDX-License-Identifier: LGPL-3.0-or-later
# Prerequisites for optional tests.
if test -n "$MPIEXEC" && test -x "$MPIEXEC"; then
    test_set_prereq MPIEXEC
fi
if test -n "$PYTHON3" && "$PYTHON3" -c "" 2>/dev/null; then
    test_set_prereq PYTHON3
fi
# pyzmq (the rogue peer's, scripts/rogue.py) may live in Debian's python3
# only (python3-zmq), not in another python3 that comes first in PATH
for py in "$PYTHON3" /usr/bin/python3 python3; do
    if test -n "$py" && "$py" -c "import zmq" 2>/dev/null; then
        PYZMQ=$py
        export PYZMQ
        test_set_prereq PYZMQ
        break
    fi
done
if command -v dot >/dev/null 2>&1; then
    test_set_prereq DOT
fi
if test "$(id -u)" = 0 && command -v ip >/dev/null 2>&1 && command -v nft >/dev/null 2>&1; then
    test_set_prereq ROOT_NETNS
fi

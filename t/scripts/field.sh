# SPDX-License-Identifier: LGPL-3.0-or-later
# field.sh RANK KEY: under `bgn start`, a top-level field of RANK's
# overlay-status JSON (shared script of the attack tests; $PYZMQ is a
# python3, sharness.d/prereqs.sh)
bgn overlay-status --json -r "$1" >field.json &&
"$PYZMQ" -c "import json,sys; print(json.load(open('field.json'))[sys.argv[1]])" "$2"

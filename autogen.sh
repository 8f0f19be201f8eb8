#!/bin/sh
# SPDX-License-Identifier: LGPL-3.0-or-later
# autogen.sh: regenerate the build system from configure.ac and Makefile.am.
set -e
cd "$(dirname "$0")"
mkdir -p config
autoreconf --force --install --verbose -I config

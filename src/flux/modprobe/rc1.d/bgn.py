# SPDX-License-Identifier: LGPL-3.0-or-later
# bgn: load the BGN overlay module on every rank at start-up; rc3
# unloads what rc1 loaded.  Configure it in the [bgn] table.
def setup(context):
    context.load_modules(["bgn"])

# SPDX-License-Identifier: LGPL-3.0-or-later
# bgn: load the BGN overlay module on every rank at start-up; rc3
# unloads what rc1 loaded.  Configure it in the [bgn] table.  Where bgn
# is the broker's overlay already (bgn-overlay.so, broker.overlay-module
# of a patched flux-broker), bgn.so beside it has nothing to do: the
# overlay answers `flux bgn` itself.
def setup(context):
    overlay = context.attr_get("broker.overlay-module", "") or ""
    if overlay.endswith("bgn-overlay.so"):
        return
    context.load_modules(["bgn"])

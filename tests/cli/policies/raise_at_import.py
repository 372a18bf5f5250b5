# SPDX-License-Identifier: Apache-2.0
# A policy file that fails while it is loaded.
raise RuntimeError("policy file refuses to load")

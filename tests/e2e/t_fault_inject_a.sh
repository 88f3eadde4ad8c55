#!/usr/bin/env bash
# Fault injection at every writing command's write, pwrite64 and rename
# calls (fault_inject_lib.sh): scenario share 1 of 2.
FAULT_PART=1/2 . "$(dirname "$0")/fault_inject_lib.sh"

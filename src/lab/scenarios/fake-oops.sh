#!/bin/bash
# Not a fastpath scenario: the lab's own check that a guest kernel oops
# ends the VM run at once (lab test runs it first, see host/test.sh).
# A user-space line that merely holds "BUG:" comes first and must not
# count; then a line through printk (/dev/kmsg, so it gets the kernel's
# time stamp; level 2, so the quiet console shows it, as it shows an oops)
# shaped like the first line of a real oops; then a wait far longer than
# the check allows.
echo "[$(date +%T)] BUG: a test's own line, not the kernel's"
sleep 1
echo "<2>Oops: int3: 0000 [#1] PREEMPT SMP NOPTI (a fake, from scenarios/fake-oops.sh)" > /dev/kmsg
sleep 600

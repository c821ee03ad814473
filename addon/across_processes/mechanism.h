// How waits reach other processes here (cross_process.h), chosen once per process.
//
//   futex_waitv (Linux): a release wakes the kernel futex of the word it changed; each process's
//     relay sleeps on the words of all its waiters at once, and the oldest blocking waiter of a
//     word on the word itself. Liveness is an open-file-description lock per identity, which
//     the kernel drops when the process ends.
//   doorbell (macOS; Linux with PARKLOCK_CROSS_PROCESS=portable): the OS can sleep on one word
//     only, so a release rings the region's doorbell (doorbell.h), one word that each process's
//     relay for the region sleeps on, and says which word it changed. Liveness is the pid and
//     start time of the identity's process (os/process_start.h); a new file is named before it
//     is linked (no O_TMPFILE); a repair's init lock is flock(2).
// On Linux the switch runs every part of macOS's mechanism but its one OS call, so that the
// cross-process suites test it here. Every process that maps a region must use the same
// mechanism: the two do not wake each other.
#pragma once

#if defined(__linux__) || defined(__APPLE__)
#define PARKLOCK_ACROSS_PROCESSES 1
#endif

namespace parklock::cross_process {

// Whether this process uses the doorbell (above): always on macOS; on Linux when the environment
// variable PARKLOCK_CROSS_PROCESS reads "portable" when first asked.
bool uses_doorbell() noexcept;

}  // namespace parklock::cross_process

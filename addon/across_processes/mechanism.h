// How waits reach other processes here (cross_process.h), chosen once per process.
//
//   futex_waitv (Linux): a release wakes the kernel futex of the word it changed; each process's
//     relay sleeps on the words of all its waiters at once, and the oldest blocking waiter of a
//     word on the word itself. Liveness is an open-file-description lock per identity, which
//     the kernel drops when the process ends.
//   doorbell (macOS, Windows; Linux with PARKLOCK_CROSS_PROCESS=portable): the OS can sleep on
//     one word only (macOS), or on none that other processes map (Windows), so a release rings
//     the region's doorbell (doorbell.h), which says which word it changed and wakes each
//     process's relay for the region where it sleeps (its signal word, or on Windows its named
//     event). Liveness is the pid and start time of the identity's process
//     (os/process_start.h); a new file is named before it is linked or renamed (no O_TMPFILE);
//     a repair's init lock is flock(2), or a byte-range lock on Windows.
// On Linux the switch runs every part of macOS's mechanism but its one OS call, so that the
// cross-process suites test it here. Every process that maps a region must use the same
// mechanism: the two do not wake each other.
#pragma once

#if defined(__linux__) || defined(__APPLE__) || defined(_WIN32)
#define PARKLOCK_ACROSS_PROCESSES 1
#endif

namespace parklock::cross_process {

// Whether this process uses the doorbell (above): always on macOS; on Linux when the environment
// variable PARKLOCK_CROSS_PROCESS reads "portable" when first asked.
bool uses_doorbell() noexcept;

}  // namespace parklock::cross_process

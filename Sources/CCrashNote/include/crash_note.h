#ifndef STATEJOURNAL_CRASH_NOTE_H
#define STATEJOURNAL_CRASH_NOTE_H

#include <stddef.h>

/// The most bytes an armed note holds.
#define SJ_CRASH_NOTE_CAPACITY 512

/// Arms the crash note: until sj_crash_note_disarm(), a crash signal (SIGSEGV, SIGBUS, SIGILL,
/// SIGTRAP, SIGABRT, SIGFPE) on the calling thread writes `bytes` to `descriptor` at offset 0, with
/// the byte at `signal_offset` replaced by the signal's number, then lets the signal take its
/// course (the handlers in place before arming run, or the default action ends the process).
/// Only async-signal-safe calls run in the handler: pwrite, sigaction, raise.
///
/// Returns 0, or -1 when `count` exceeds SJ_CRASH_NOTE_CAPACITY or a handler could not be installed
/// (errno says why; nothing stays installed).
int sj_crash_note_arm(int descriptor, const void *bytes, size_t count, size_t signal_offset);

/// Puts back the handlers that were in place before sj_crash_note_arm(), and forgets the note.
void sj_crash_note_disarm(void);

#endif

#define _GNU_SOURCE
#include "crash_note.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static const int crash_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGABRT, SIGFPE};
#define CRASH_SIGNAL_COUNT (sizeof(crash_signals) / sizeof(crash_signals[0]))

static struct sigaction previous_actions[CRASH_SIGNAL_COUNT];
static unsigned char note[SJ_CRASH_NOTE_CAPACITY];
static volatile sig_atomic_t note_count = 0;
static volatile sig_atomic_t note_descriptor = -1;
static size_t note_signal_offset = 0;
static pid_t armed_thread = 0;
static int armed = 0;

static int slot_of(int signal_number) {
    for (size_t index = 0; index < CRASH_SIGNAL_COUNT; index++) {
        if (crash_signals[index] == signal_number) return (int)index;
    }
    return -1;
}

static void on_crash_signal(int signal_number, siginfo_t *info, void *context) {
    (void)info;
    (void)context;
    int saved_errno = errno;
    int slot = slot_of(signal_number);
    int descriptor = note_descriptor;
    if (descriptor >= 0 && (pid_t)syscall(SYS_gettid) == armed_thread) {
        note_descriptor = -1;
        unsigned char written[SJ_CRASH_NOTE_CAPACITY];
        size_t count = (size_t)note_count;
        memcpy(written, note, count);
        if (note_signal_offset < count) written[note_signal_offset] = (unsigned char)signal_number;
        size_t done = 0;
        while (done < count) {
            ssize_t result = pwrite(descriptor, written + done, count - done, (off_t)done);
            if (result <= 0) break;
            done += (size_t)result;
        }
    }
    // The handlers before this one decide what the signal does: the signal is blocked while this
    // runs, so the one raised here is delivered to them as this handler returns (and a fault
    // that repeats when its instruction runs again is delivered to them likewise).
    if (slot >= 0) sigaction(signal_number, &previous_actions[slot], NULL);
    raise(signal_number);
    errno = saved_errno;
}

int sj_crash_note_arm(int descriptor, const void *bytes, size_t count, size_t signal_offset) {
    if (count > SJ_CRASH_NOTE_CAPACITY) {
        errno = EINVAL;
        return -1;
    }
    if (armed) sj_crash_note_disarm();
    note_descriptor = -1;
    memcpy(note, bytes, count);
    note_count = (sig_atomic_t)count;
    note_signal_offset = signal_offset;
    armed_thread = (pid_t)syscall(SYS_gettid);
    struct sigaction action;
    memset(&action, 0, sizeof(action));
    action.sa_sigaction = on_crash_signal;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    for (size_t index = 0; index < CRASH_SIGNAL_COUNT; index++) {
        if (sigaction(crash_signals[index], &action, &previous_actions[index]) != 0) {
            int failure = errno;
            for (size_t undo = 0; undo < index; undo++) sigaction(crash_signals[undo], &previous_actions[undo], NULL);
            errno = failure;
            return -1;
        }
    }
    armed = 1;
    note_descriptor = descriptor;
    return 0;
}

void sj_crash_note_disarm(void) {
    if (!armed) return;
    note_descriptor = -1;
    for (size_t index = 0; index < CRASH_SIGNAL_COUNT; index++) {
        struct sigaction current;
        // Only a handler still ours is put back: one installed after arming stays.
        if (sigaction(crash_signals[index], NULL, &current) == 0 && (current.sa_flags & SA_SIGINFO)
            && current.sa_sigaction == on_crash_signal) {
            sigaction(crash_signals[index], &previous_actions[index], NULL);
        }
    }
    armed = 0;
}

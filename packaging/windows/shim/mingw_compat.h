/* Forced include for cross-compiling llama.cpp with Debian 12's mingw-w64 (v10 headers), which
 * declare ThreadPowerThrottling but not the structure and constants the Windows SDK pairs with it
 * (ggml-cpu.c sets a thread's power throttling on Windows 8+). The values are the SDK's. */
#ifndef DESKTOP_KB_MINGW_COMPAT_H
#define DESKTOP_KB_MINGW_COMPAT_H
#if defined(_WIN32) && !defined(THREAD_POWER_THROTTLING_CURRENT_VERSION)
#include <windows.h>
#define THREAD_POWER_THROTTLING_CURRENT_VERSION 1
#define THREAD_POWER_THROTTLING_EXECUTION_SPEED 0x1
typedef struct _THREAD_POWER_THROTTLING_STATE {
    ULONG Version;
    ULONG ControlMask;
    ULONG StateMask;
} THREAD_POWER_THROTTLING_STATE;
#endif
#endif

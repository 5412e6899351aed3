/* TEST-ONLY shim for the Wine smoke test (packaging/windows/wine_smoke.sh), never shipped: Wine 8
 * has no bcryptprimitives.dll, whose ProcessPrng the Rust standard library (qdrant-edge) calls for
 * random bytes; Windows 10/11 has it. Implemented on RtlGenRandom (advapi32's SystemFunction036). */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
    while (length > 0) {
        ULONG chunk = length > 0x7fffffff ? 0x7fffffff : (ULONG)length;
        if (!SystemFunction036(data, chunk)) return FALSE;
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}

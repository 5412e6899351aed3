/* TEST-ONLY shim for the Wine smoke test (wine_smoke.sh), never shipped. qdrant-edge pre-allocates
 * its write-ahead log with SetFileInformationByHandle(FileAllocationInfo), which Wine 8 does not
 * implement (ERROR_CALL_NOT_IMPLEMENTED: "Can't init WAL"); Windows does. In the *installed test
 * copy only*, qdrant_edge.pyd's import of the lowercase "kernel32.dll" (Rust's own imports) is
 * renamed to this DLL, "kernelwi.dll", which forwards every function to kernel32 (the .def made by
 * patch_qdrant.py) except this one: an allocation request succeeds without pre-allocating (it is
 * a size hint; the file grows as it is written), every other class goes to Wine. */
#include <windows.h>

typedef BOOL (WINAPI *SetInfo)(HANDLE, FILE_INFO_BY_HANDLE_CLASS, LPVOID, DWORD);

BOOL WINAPI ShimSetFileInformationByHandle(HANDLE file, FILE_INFO_BY_HANDLE_CLASS cls, LPVOID info, DWORD size) {
    static SetInfo real;
    if (cls == FileAllocationInfo) return TRUE;
    if (!real) real = (SetInfo)GetProcAddress(GetModuleHandleW(L"kernel32.dll"), "SetFileInformationByHandle");
    return real(file, cls, info, size);
}

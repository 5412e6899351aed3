/* TEST-ONLY stand-in for Wine 8's mscms.dll in the Wine test prefix (wine_smoke.sh, wine_startup.sh),
 * never shipped. Qt's Windows platform plugin (qwindows.dll) reads the screen's colour profile when
 * a window is shown: it imports these four functions, and Wine 8 does not implement
 * WcsCreateIccProfile (the process aborts as the main window appears; Windows has it since Vista).
 * Here every profile "cannot be opened", so Qt takes the screen as sRGB. Loaded only where
 * WINEDLLOVERRIDES says mscms=n (wine_install.sh). */
#include <windows.h>

__declspec(dllexport) HANDLE WINAPI OpenColorProfileW(void *profile, DWORD access, DWORD share, DWORD creation) {
    (void)profile; (void)access; (void)share; (void)creation;
    SetLastError(ERROR_FILE_NOT_FOUND);
    return NULL;
}
__declspec(dllexport) BOOL WINAPI CloseColorProfile(HANDLE profile) { (void)profile; return TRUE; }
__declspec(dllexport) BOOL WINAPI GetColorProfileFromHandle(HANDLE profile, BYTE *buffer, DWORD *size) {
    (void)profile; (void)buffer; if (size) *size = 0;
    SetLastError(ERROR_INVALID_PARAMETER);
    return FALSE;
}
__declspec(dllexport) HANDLE WINAPI WcsCreateIccProfile(HANDLE profile, DWORD options) {
    (void)profile; (void)options;
    SetLastError(ERROR_NOT_SUPPORTED);
    return NULL;
}

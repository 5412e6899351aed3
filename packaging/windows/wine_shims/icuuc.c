/* TEST-ONLY stub for the Wine smoke test (packaging/windows/wine_smoke.sh), never shipped: Qt6Core
 * links Windows 10's system ICU (icuuc.dll, present since Windows 10 1903) for legacy text codecs;
 * Wine 8 has none, so Qt would not load at all. Every converter "fails to open" (Qt then falls back
 * to its own UTF-8/UTF-16/Latin-1 codecs, all desktop-kb uses); the rest is never reached. */
#include <stddef.h>

#define STUB(name) __declspec(dllexport) int name(void) { return 0; }

__declspec(dllexport) void *ucnv_open(const char *name, int *err) {
    (void)name;
    if (err) *err = 4; /* U_FILE_ACCESS_ERROR */
    return NULL;
}
__declspec(dllexport) const char *ucnv_getAvailableName(int n) { (void)n; return NULL; }
__declspec(dllexport) const char *ucnv_getStandardName(const char *n, const char *s, int *err) {
    (void)n; (void)s; if (err) *err = 4; return NULL;
}
STUB(ucnv_close) STUB(UCNV_FROM_U_CALLBACK_SUBSTITUTE) STUB(UCNV_TO_U_CALLBACK_SUBSTITUTE) STUB(ucnv_reset)
STUB(ucnv_getMaxCharSize) STUB(ucnv_getName) STUB(ucnv_getToUCallBack) STUB(ucnv_getFromUCallBack)
STUB(ucnv_setToUCallBack) STUB(ucnv_setFromUCallBack) STUB(ucnv_cbToUWriteUChars) STUB(ucnv_toUnicode)
STUB(ucnv_cbFromUWriteUChars) STUB(ucnv_toUCountPending) STUB(ucnv_fromUCountPending) STUB(ucnv_countAvailable)
STUB(ucnv_fromUnicode)

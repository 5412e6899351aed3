/* desktop-kb's AppImage runtime: the ELF at the head of desktop-kb-<version>-x86_64.AppImage.
 *
 * The file is this program, then a SquashFS image of the app folder (AppDir), then a 16-byte
 * trailer: "DKBAPPIM" and the image's offset (uint64, little endian). Like AppImage's
 * "--appimage-extract-and-run" mode, and needing no FUSE (many systems no longer have libfuse2),
 * it unpacks the image once into the app's own data folder
 *     ${XDG_DATA_HOME:-~/.local/share}/desktop-kb/app/<image id>/
 * (into a temporary folder renamed when complete, so an interrupted unpack is never used) and
 * then runs <that folder>/AppRun with the same arguments, APPIMAGE set to this file's path and
 * APPDIR to the folder. Later starts find the folder and start at once; a new version's first
 * start removes the older unpacked copies.
 *
 *   --appimage-extract [DIR]   unpack into DIR (default ./squashfs-root) and stop
 *   --appimage-offset          print the image's offset and stop
 *   --appimage-cache           print the folder it runs from and stop
 *
 * Built statically (packaging/linux/build-appimage.sh) against Debian's libsquashfuse, zlib, xz,
 * zstd, lz4 and lzo, so it runs on any x86-64 Linux. The ELF header's e_ident padding carries
 * AppImage's type-2 magic ("AI\2" at byte 8) for desktop tools that look for it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <squashfuse/squashfuse.h>

#define TRAILER_MAGIC "DKBAPPIM"
#define BUF_SIZE (1 << 20)

static int fail(const char *what, const char *path) {
    fprintf(stderr, "desktop-kb: %s %s: %s\n", what, path ? path : "", strerror(errno ? errno : EIO));
    return 127;
}

static int read_offset(const char *self, uint64_t *offset) {
    int fd = open(self, O_RDONLY);
    if (fd < 0) return -1;
    unsigned char tail[16];
    off_t end = lseek(fd, 0, SEEK_END);
    if (end < 16 || pread(fd, tail, 16, end - 16) != 16) { close(fd); return -1; }
    close(fd);
    if (memcmp(tail, TRAILER_MAGIC, 8) != 0) { errno = EINVAL; return -1; }
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | tail[8 + i];
    *offset = v;
    return 0;
}

static int mkdirs(const char *path, mode_t mode) {
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s", path);
    for (char *p = tmp + 1; *p; p++) {
        if (*p == '/') {
            *p = 0;
            if (mkdir(tmp, 0755) != 0 && errno != EEXIST) return -1;
            *p = '/';
        }
    }
    if (mkdir(tmp, mode) != 0 && errno != EEXIST) return -1;
    return 0;
}

static int write_file(sqfs *fs, sqfs_inode *inode, const char *dest, char *buf) {
    int out = open(dest, O_WRONLY | O_CREAT | O_TRUNC, 0700);
    if (out < 0) return -1;
    sqfs_off_t size = (sqfs_off_t)inode->xtra.reg.file_size, done = 0;
    while (done < size) {
        sqfs_off_t n = size - done < BUF_SIZE ? size - done : BUF_SIZE;
        if (sqfs_read_range(fs, inode, done, &n, buf) != SQFS_OK || n <= 0) { close(out); errno = EIO; return -1; }
        for (sqfs_off_t w = 0; w < n;) {
            ssize_t k = write(out, buf + w, (size_t)(n - w));
            if (k < 0) { close(out); return -1; }  /* ENOSPC among others: said by the caller */
            w += k;
        }
        done += n;
    }
    if (fchmod(out, inode->base.mode & 07777) != 0 || close(out) != 0) return -1;
    return 0;
}

/* Unpack the image at `offset` of `self` into `dest` (created). */
static int extract(const char *self, uint64_t offset, const char *dest) {
    sqfs fs;
    if (sqfs_open_image(&fs, self, (size_t)offset) != SQFS_OK) { errno = EINVAL; return fail("cannot read the image in", self); }
    if (mkdirs(dest, 0755) != 0) return fail("cannot create", dest);
    char *buf = malloc(BUF_SIZE);
    sqfs_traverse trv;
    if (!buf || sqfs_traverse_open(&trv, &fs, sqfs_inode_root(&fs)) != SQFS_OK) return fail("cannot list the image in", self);
    sqfs_err err = SQFS_OK;
    int rc = 0;
    while (rc == 0 && sqfs_traverse_next(&trv, &err)) {
        if (trv.dir_end) continue;
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", dest, trv.path);
        sqfs_inode inode;
        if (sqfs_inode_get(&fs, &inode, sqfs_dentry_inode(&trv.entry)) != SQFS_OK) { errno = EIO; rc = fail("cannot read", trv.path); break; }
        switch (inode.base.inode_type) {
        case SQUASHFS_DIR_TYPE:
        case SQUASHFS_LDIR_TYPE:
            if (mkdir(path, 0755) != 0 && errno != EEXIST) rc = fail("cannot create", path);
            break;
        case SQUASHFS_REG_TYPE:
        case SQUASHFS_LREG_TYPE:
            if (write_file(&fs, &inode, path, buf) != 0) rc = fail("cannot write", path);
            break;
        case SQUASHFS_SYMLINK_TYPE:
        case SQUASHFS_LSYMLINK_TYPE: {
            char target[PATH_MAX];
            size_t size = sizeof target;
            if (sqfs_readlink(&fs, &inode, target, &size) != SQFS_OK || symlink(target, path) != 0) rc = fail("cannot link", path);
            break;
        }
        default:
            break;  /* devices, fifos, sockets: an app folder has none */
        }
    }
    if (rc == 0 && err != SQFS_OK) { errno = EIO; rc = fail("the image is damaged:", self); }
    sqfs_traverse_close(&trv);
    sqfs_destroy(&fs);
    free(buf);
    return rc;
}

/* <data folder>/app: the app's own data folder (desktop-kb's default, ~/.local/share/desktop-kb),
   so that running the AppImage leaves nothing elsewhere. */
static void app_root(char *out, size_t n) {
    const char *xdg = getenv("XDG_DATA_HOME");
    const char *home = getenv("HOME");
    if (xdg && *xdg) snprintf(out, n, "%s/desktop-kb/app", xdg);
    else snprintf(out, n, "%s/.local/share/desktop-kb/app", home && *home ? home : "/tmp");
}

static void cache_dir(char *out, size_t n, const char *self, uint64_t offset) {
    /* the image's id: its build time and size from the SquashFS superblock */
    unsigned char sb[48] = {0};
    int fd = open(self, O_RDONLY);
    if (fd >= 0) { if (pread(fd, sb, sizeof sb, (off_t)offset) != (ssize_t)sizeof sb) memset(sb, 0, sizeof sb); close(fd); }
    uint32_t mkfs_time = sb[8] | sb[9] << 8 | sb[10] << 16 | (uint32_t)sb[11] << 24;
    uint64_t bytes_used = 0;
    for (int i = 7; i >= 0; i--) bytes_used = (bytes_used << 8) | sb[40 + i];
    char root[PATH_MAX];
    app_root(root, sizeof root);
    snprintf(out, n, "%s/%x-%llx", root, mkfs_time, (unsigned long long)bytes_used);
}

/* Remove the unpacked copies of other versions (and unpacks that were interrupted). */
static void remove_others(const char *keep) {
    char root[PATH_MAX];
    app_root(root, sizeof root);
    const char *name = strrchr(keep, '/');
    char cmd[PATH_MAX * 2 + 64];
    snprintf(cmd, sizeof cmd, "cd '%s' 2>/dev/null && for d in *; do [ \"$d\" = '%s' ] || rm -rf -- \"$d\"; done",
             root, name ? name + 1 : keep);
    if (system(cmd) != 0) { /* best effort: old copies only cost disk */ }
}

int main(int argc, char **argv) {
    char self[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0) return fail("cannot find itself", "/proc/self/exe");
    self[len] = 0;
    uint64_t offset;
    if (read_offset(self, &offset) != 0) return fail("no image inside", self);
    if (argc > 1 && strcmp(argv[1], "--appimage-offset") == 0) { printf("%llu\n", (unsigned long long)offset); return 0; }
    if (argc > 1 && strcmp(argv[1], "--appimage-extract") == 0)
        return extract(self, offset, argc > 2 ? argv[2] : "squashfs-root");

    char dir[PATH_MAX], partial[PATH_MAX + 32], marker[PATH_MAX + 16], apprun[PATH_MAX + 16];
    cache_dir(dir, sizeof dir, self, offset);
    if (argc > 1 && strcmp(argv[1], "--appimage-cache") == 0) { printf("%s\n", dir); return 0; }
    snprintf(marker, sizeof marker, "%s/.complete", dir);
    if (access(marker, F_OK) != 0) {
        fprintf(stderr, "desktop-kb: unpacking the app into %s (once; about a minute)…\n", dir);
        snprintf(partial, sizeof partial, "%s.partial-%d", dir, (int)getpid());
        if (extract(self, offset, partial) != 0) {
            char cmd[PATH_MAX * 2];
            snprintf(cmd, sizeof cmd, "rm -rf '%s'", partial);  /* leave nothing half unpacked */
            if (system(cmd) != 0) { /* best effort */ }
            return 127;
        }
        char done[PATH_MAX + 48];
        snprintf(done, sizeof done, "%s/.complete", partial);
        int fd = open(done, O_WRONLY | O_CREAT, 0644);
        if (fd >= 0) close(fd);
        if (rename(partial, dir) != 0 && access(marker, F_OK) != 0) return fail("cannot move into place", dir);
        remove_others(dir);
    }
    snprintf(apprun, sizeof apprun, "%s/AppRun", dir);
    setenv("APPIMAGE", self, 1);
    setenv("APPDIR", dir, 1);
    setenv("ARGV0", argv[0], 1);
    argv[0] = apprun;
    execv(apprun, argv);
    return fail("cannot start", apprun);
}

#!/usr/bin/python3
"""A disk whose writes fail as a whole, for the kernel durability script.

Mounts a FUSE file system at MOUNTPOINT holding one file, `disk.img`, of SIZE bytes, kept in
BACKING (a sparse file on a file system with room). A loop device over `disk.img` is a block
device on which an ext4 file system can be made and mounted. While the file CONTROL exists, every
write and every flush of `disk.img` fails with EIO, whole: nothing of a failed request reaches
BACKING, as when a disk's writes fail. When CONTROL holds the word `flush`, only flushes fail (a
disk whose cache cannot be written out). Reads keep working. Without CONTROL the disk works again.

A loop device over a file that accepts only part of a write (a full tmpfs) reports the request as
done, so the kernel believes bytes were written that never were: that is not a failing disk, and
this one exists so that the durability tests never see such a device.

Usage: failing-disk.py MOUNTPOINT BACKING SIZE CONTROL   (stays in the foreground; unmount to stop)
"""

import errno
import os
import stat
import sys
import time

from fusepy import FUSE, FuseOSError, Operations

NAME = "/disk.img"


class FailingDisk(Operations):
    def __init__(self, backing, size, control):
        self.control = control
        self.size = size
        self.fd = os.open(backing, os.O_RDWR | os.O_CREAT, 0o600)
        os.ftruncate(self.fd, size)
        self.failed_writes = 0

    def failing(self, flush=False):
        try:
            with open(self.control) as control:
                only_flushes = control.read().strip() == "flush"
        except FileNotFoundError:
            return False
        return flush or not only_flushes

    def getattr(self, path, fh=None):
        now = time.time()
        if path == "/":
            return {"st_mode": stat.S_IFDIR | 0o755, "st_nlink": 2, "st_atime": now, "st_mtime": now, "st_ctime": now}
        if path == NAME:
            return {"st_mode": stat.S_IFREG | 0o600, "st_nlink": 1, "st_size": self.size,
                    "st_atime": now, "st_mtime": now, "st_ctime": now}
        raise FuseOSError(errno.ENOENT)

    def readdir(self, path, fh):
        return [".", "..", NAME[1:]]

    def open(self, path, flags):
        if path != NAME:
            raise FuseOSError(errno.ENOENT)
        return 0

    def read(self, path, length, offset, fh):
        return os.pread(self.fd, length, offset)

    def write(self, path, data, offset, fh):
        if self.failing():
            self.failed_writes += 1
            raise FuseOSError(errno.EIO)
        if offset + len(data) > self.size:
            raise FuseOSError(errno.ENOSPC)
        written = os.pwrite(self.fd, data, offset)
        if written != len(data):
            raise FuseOSError(errno.EIO)
        return written

    def truncate(self, path, length, fh=None):
        if length != self.size:
            raise FuseOSError(errno.EPERM)

    def flush(self, path, fh):
        return 0

    def fsync(self, path, datasync, fh):
        if self.failing(flush=True):
            raise FuseOSError(errno.EIO)
        os.fsync(self.fd)
        return 0


def main():
    mountpoint, backing, size, control = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    FUSE(FailingDisk(backing, size, control), mountpoint, foreground=True, direct_io=True, nothreads=False)


if __name__ == "__main__":
    main()

/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The traced authors
 *
 * Ring memory (ringmem.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ring.h"
#include "ringmem.h"

int
ringmem_create(uint32_t max_order)
{
	int fd, err;

	fd = memfd_create("traced-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd == -1)
		return -1;
	if (ftruncate(fd, (off_t)traced_ring_file_size(max_order)) == -1 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW |
	    F_SEAL_SEAL) == -1) {
		err = errno;
		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

void *
ringmem_map_aligned(int fd, size_t len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), span;
	uint8_t *res, *p, *end;
	int err;

	span = len + RINGMEM_HUGE;
	res = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
	    MAP_NORESERVE, -1, 0);
	if (res == MAP_FAILED)
		return MAP_FAILED;
	p = (uint8_t *)(((uintptr_t)res + RINGMEM_HUGE - 1) &
	    ~(uintptr_t)(RINGMEM_HUGE - 1));
	if (mmap(p, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd,
	    0) == MAP_FAILED) {
		err = errno;
		munmap(res, span);
		errno = err;
		return MAP_FAILED;
	}
	if (p > res)
		munmap(res, (size_t)(p - res));
	end = p + (len + page - 1) / page * page;
	if (end < res + span)
		munmap(end, (size_t)(res + span - end));
	return p;
}

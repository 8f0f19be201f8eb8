/* SPDX-License-Identifier: LGPL-3.0-or-later */
/* brokerlog.c: brokers' stderr, line by line (see brokerlog.h).
 *
 * One small buffer per pipe collects a partial line until its newline
 * arrives; a line longer than the buffer is passed on in pieces (each
 * piece still a whole write).  The file gets every line with a single
 * write, so a reader (tail -f) never sees half a line either.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "src/common/libutil/loglevel.h"
#include "brokerlog.h"

#define LINE_BUF 4096

struct pipe_in {
    int fd;
    int rank;
    size_t len;
    char buf[LINE_BUF];
};

struct brokerlog {
    int file;
    char path[PATH_MAX];
    int term_level;
    struct pipe_in **pipes;
    int npipes;
    unsigned long hidden;
};

struct brokerlog *brokerlog_create (const char *path, int term_level)
{
    struct brokerlog *bl = calloc (1, sizeof (*bl));

    if (!bl)
        return NULL;
    snprintf (bl->path, sizeof (bl->path), "%s", path);
    bl->term_level = term_level;
    if ((bl->file = open (path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
                          0600)) < 0) {
        free (bl);
        return NULL;
    }
    return bl;
}

/* One whole line (without its newline) to the file and maybe stderr. */
static void emit (struct brokerlog *bl, const char *line, size_t len)
{
    char out[LINE_BUF + 1];
    int level;

    memcpy (out, line, len);
    out[len] = '\0';
    level = loglevel_of_line (out);
    out[len] = '\n';
    if (write (bl->file, out, len + 1) < 0) {
        /* the file is a copy; the terminal still gets what it should */
    }
    if (level < 0 || level <= bl->term_level) {
        if (write (STDERR_FILENO, out, len + 1) < 0) {
            /* nowhere left to say so */
        }
    }
    else
        bl->hidden++;
}

static void take_lines (struct brokerlog *bl, struct pipe_in *p)
{
    char *nl;

    while ((nl = memchr (p->buf, '\n', p->len))) {
        size_t n = (size_t)(nl - p->buf);
        emit (bl, p->buf, n);
        memmove (p->buf, nl + 1, p->len - n - 1);
        p->len -= n + 1;
    }
    if (p->len == sizeof (p->buf)) {   /* a very long line: pass it on */
        emit (bl, p->buf, p->len);
        p->len = 0;
    }
}

static void close_pipe (struct brokerlog *bl, int i)
{
    struct pipe_in *p = bl->pipes[i];

    if (p->len > 0)
        emit (bl, p->buf, p->len);
    close (p->fd);
    free (p);
    bl->pipes[i] = bl->pipes[--bl->npipes];
}

/* Read pipe i until it would block; 1 if it reached EOF (and was
 * closed). */
static int read_pipe (struct brokerlog *bl, int i)
{
    struct pipe_in *p = bl->pipes[i];
    ssize_t n;

    for (;;) {
        n = read (p->fd, p->buf + p->len, sizeof (p->buf) - p->len);
        if (n > 0) {
            p->len += (size_t)n;
            take_lines (bl, p);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return 0;
        close_pipe (bl, i);
        return 1;
    }
}

int brokerlog_add (struct brokerlog *bl, int rank, int fd)
{
    struct pipe_in **v, *p;

    if (!(p = calloc (1, sizeof (*p))))
        return -1;
    if (!(v = realloc (bl->pipes, (bl->npipes + 1) * sizeof (*v)))) {
        free (p);
        return -1;
    }
    bl->pipes = v;
    p->fd = fd;
    p->rank = rank;
    fcntl (fd, F_SETFL, fcntl (fd, F_GETFL) | O_NONBLOCK);
    fcntl (fd, F_SETFD, FD_CLOEXEC);
    v[bl->npipes++] = p;
    return 0;
}

int brokerlog_readable (struct brokerlog *bl, int fd)
{
    for (int i = 0; bl && i < bl->npipes; i++) {
        if (bl->pipes[i]->fd == fd) {
            read_pipe (bl, i);
            return 1;
        }
    }
    return 0;
}

void brokerlog_drain (struct brokerlog *bl)
{
    for (int i = 0; bl && i < bl->npipes;) {
        if (!read_pipe (bl, i))
            i++;
    }
}

void brokerlog_destroy (struct brokerlog **blp)
{
    if (blp && *blp) {
        struct brokerlog *bl = *blp;
        brokerlog_drain (bl);
        while (bl->npipes > 0)
            close_pipe (bl, 0);
        free (bl->pipes);
        close (bl->file);
        free (bl);
        *blp = NULL;
    }
}

unsigned long brokerlog_hidden (struct brokerlog *bl)
{
    return bl ? bl->hidden : 0;
}

const char *brokerlog_path (struct brokerlog *bl)
{
    return bl ? bl->path : "";
}

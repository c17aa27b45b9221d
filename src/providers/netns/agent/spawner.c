/*
 * netrepro spawner: starts the harness's commands, inside a lab namespace when asked, so that the
 * harness never forks itself.
 *
 * Why: Node forks its whole address space for every child and its main thread waits in uv_spawn until
 * the child has exec'd. A suite run starts ~1,700 commands (most through `nsenter`); in a profile the
 * event loop spent about half the run blocked in ChildProcess.spawn. This process is small, forks in
 * microseconds, never waits for a child, and enters namespaces itself (setns), so `nsenter`'s own exec
 * is saved too. The harness shows and reports the equivalent `nsenter ... --` argv, and behaves the same
 * without this program (it falls back to node:child_process).
 *
 * Protocol, on stdin (requests) and stdout (events); every frame is
 *   u32 length (of what follows), u8 type, u32 id, payload       (host byte order)
 * Requests:
 *   'S' spawn:  u8 flags (1: a stdin pipe, else /dev/null), then NUL-terminated strings:
 *               netns path, mount-ns path, cgroup dir ("" when none), the env count N, N "K=V"
 *               additions, then argv (the rest)
 *   'I' input:  bytes for the child's stdin; an empty payload closes it
 *   'K' kill:   u8 signal number (ignored once the child is reaped)
 * Events:
 *   'P' started: i32 pid          'F' failed: i32 errno (the exec failed: nothing ran; no 'X' follows)
 *   'O' output:  u8 stream (1, 2), bytes; no bytes: that stream ended
 *   'X' exit:    i32 exit code (-1 when killed), i32 signal (0 when it exited)
 * With a namespace to enter, a failure to enter it or to exec prints nsenter's message on the
 * child's stderr and exits 1 or 127/126, as `nsenter` would; without one, a failed exec is 'F'.
 * At EOF on stdin (the harness ended, however) every running child gets SIGTERM and this exits.
 *
 * usage: spawner            (started by the harness, which talks to it over stdin/stdout)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

struct child {
	uint32_t id;
	pid_t pid;          /* 0 once reaped */
	int out[3];         /* [1] stdout, [2] stderr read ends; -1 at EOF */
	int in;             /* stdin write end, -1 when none or closed */
	int errpipe;        /* CLOEXEC: EOF at exec, an errno before it on failure */
	char *pending;      /* stdin bytes not yet written */
	size_t pending_len;
	int close_in;       /* close stdin once pending is written */
	int failed;
	struct child *next;
};

static struct child *children;

static void die(const char *what)
{
	fprintf(stderr, "spawner: %s: %s\n", what, strerror(errno));
	exit(3);
}

static void write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			exit(0); /* the harness is gone */
		p += n;
		len -= (size_t)n;
	}
}

static void event(char type, uint32_t id, const void *a, size_t alen, const void *b, size_t blen)
{
	char head[9];
	uint32_t len = (uint32_t)(5 + alen + blen);
	memcpy(head, &len, 4);
	head[4] = type;
	memcpy(head + 5, &id, 4);
	write_all(1, head, sizeof(head));
	if (alen)
		write_all(1, a, alen);
	if (blen)
		write_all(1, b, blen);
}

static struct child *find(uint32_t id)
{
	for (struct child *c = children; c; c = c->next)
		if (c->id == id)
			return c;
	return NULL;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* In the child: enter what was asked, as `sh -c 'echo $$ > CG/cgroup.procs'` and nsenter would, then exec. */
static void child_exec(const char *net, const char *mnt, const char *cgroup, char **env, int nenv, char **argv, int errpipe)
{
	/* what main() changed, back to what the harness's children get: default dispositions, nothing blocked */
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGINT, SIG_DFL);
	signal(SIGQUIT, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	int entering = *net || *mnt;
	if (*cgroup) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/cgroup.procs", cgroup);
		int fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, "0", 1) != 1) {
			dprintf(2, "sh: 1: cannot create %s: %s\n", path, strerror(errno));
			_exit(2);
		}
		close(fd);
	}
	/* open both first (paths resolve in our mount namespace), then join: net before mnt, as nsenter does */
	int netfd = -1, mntfd = -1;
	if (*net && (netfd = open(net, O_RDONLY | O_CLOEXEC)) < 0) {
		dprintf(2, "nsenter: cannot open %s: %s\n", net, strerror(errno));
		_exit(1);
	}
	if (*mnt && (mntfd = open(mnt, O_RDONLY | O_CLOEXEC)) < 0) {
		dprintf(2, "nsenter: cannot open %s: %s\n", mnt, strerror(errno));
		_exit(1);
	}
	if (netfd >= 0 && setns(netfd, CLONE_NEWNET)) {
		dprintf(2, "nsenter: reassociate to namespace 'ns/net' failed: %s\n", strerror(errno));
		_exit(1);
	}
	if (mntfd >= 0 && setns(mntfd, CLONE_NEWNS)) {
		dprintf(2, "nsenter: reassociate to namespace 'ns/mnt' failed: %s\n", strerror(errno));
		_exit(1);
	}
	for (int i = 0; i < nenv; i++)
		putenv(env[i]);
	execvp(argv[0], argv);
	int e = errno;
	if (entering) {
		dprintf(2, "nsenter: failed to execute %s: %s\n", argv[0], strerror(e));
		_exit(e == ENOENT ? 127 : 126);
	}
	ssize_t ignored = write(errpipe, &e, sizeof(e));
	(void)ignored;
	_exit(127);
}

static void spawn(uint32_t id, const char *p, size_t len)
{
	int32_t einval = EINVAL; /* a malformed request: reported, never dropped (the harness waits for an answer) */
	if (len < 2) {
		event('F', id, &einval, 4, NULL, 0);
		return;
	}
	int want_stdin = p[0] & 1;
	/* the strings: net, mnt, cgroup, nenv, env..., argv... (each NUL-terminated; as many as there are) */
	char *copy = malloc(len);
	memcpy(copy, p + 1, len - 1);
	copy[len - 1] = 0;
	size_t n = 0;
	for (char *s = copy; s < copy + len - 1; s += strlen(s) + 1)
		n++;
	char **strings = calloc(n + 1, sizeof(char *));
	n = 0;
	for (char *s = copy; s < copy + len - 1; s += strlen(s) + 1)
		strings[n++] = s;
	long nenv = n >= 4 ? strtol(strings[3], NULL, 10) : -1;
	if (nenv < 0 || (size_t)(4 + nenv) >= n) {
		event('F', id, &einval, 4, NULL, 0);
		free(strings);
		free(copy);
		return;
	}
	char **argv = calloc(n - 4 - (size_t)nenv + 1, sizeof(char *));
	for (size_t i = 4 + (size_t)nenv; i < n; i++)
		argv[i - 4 - (size_t)nenv] = strings[i];

	int out[2], err[2], in[2] = { -1, -1 }, ep[2];
	if (pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC) || pipe2(ep, O_CLOEXEC))
		die("pipe");
	if (want_stdin) {
		if (pipe2(in, O_CLOEXEC))
			die("pipe");
	} else if ((in[0] = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0)
		die("/dev/null");
	pid_t pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		/* dup2 clears CLOEXEC on 0, 1, 2; every other descriptor of ours closes at exec */
		dup2(in[0], 0);
		dup2(out[1], 1);
		dup2(err[1], 2);
		child_exec(strings[0], strings[1], strings[2], strings + 4, (int)nenv, argv, ep[1]);
	}
	close(in[0]);
	close(out[1]);
	close(err[1]);
	close(ep[1]);
	struct child *c = calloc(1, sizeof(*c));
	c->id = id;
	c->pid = pid;
	c->out[0] = -1;
	c->out[1] = out[0];
	c->out[2] = err[0];
	c->in = want_stdin ? in[1] : -1;
	if (c->in >= 0)
		fcntl(c->in, F_SETFL, O_NONBLOCK);
	c->errpipe = ep[0];
	c->next = children;
	children = c;
	free(argv);
	free(strings);
	free(copy);
	int32_t p32 = pid;
	event('P', id, &p32, 4, NULL, 0);
}

static void flush_stdin(struct child *c)
{
	while (c->in >= 0 && c->pending_len > 0) {
		ssize_t n = write(c->in, c->pending, c->pending_len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n < 0) { /* EPIPE: it exited without reading, as a child may */
			c->pending_len = 0;
			break;
		}
		memmove(c->pending, c->pending + n, c->pending_len - (size_t)n);
		c->pending_len -= (size_t)n;
	}
	if (c->pending_len == 0 && c->close_in)
		close_fd(&c->in);
}

static void input(uint32_t id, const char *p, size_t len)
{
	struct child *c = find(id);
	if (!c || c->in < 0)
		return;
	if (len == 0)
		c->close_in = 1;
	else {
		c->pending = realloc(c->pending, c->pending_len + len);
		memcpy(c->pending + c->pending_len, p, len);
		c->pending_len += len;
	}
	flush_stdin(c);
}

static void finish(struct child *c)
{
	for (struct child **pp = &children; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	close_fd(&c->in);
	close_fd(&c->errpipe);
	free(c->pending);
	free(c);
}

/* The exec report: EOF when the exec happened, an errno when it failed ('F'); read before any 'X'. */
static void read_errpipe(struct child *c)
{
	int e = 0;
	ssize_t n = read(c->errpipe, &e, sizeof(e)); /* read only when readable, or once the child is dead */
	close_fd(&c->errpipe);
	if (n == sizeof(e)) {
		int32_t e32 = e;
		c->failed = e;
		event('F', c->id, &e32, 4, NULL, 0);
	}
}

static void reap(void)
{
	int status;
	pid_t pid;
	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		for (struct child *c = children; c; c = c->next) {
			if (c->pid != pid)
				continue;
			c->pid = 0;
			if (c->errpipe >= 0)
				read_errpipe(c); /* it is dead: the report is there, or EOF */
			if (!c->failed) {
				int32_t v[2] = { WIFEXITED(status) ? WEXITSTATUS(status) : -1, WIFSIGNALED(status) ? WTERMSIG(status) : 0 };
				event('X', c->id, v, sizeof(v), NULL, 0);
			}
			break;
		}
	}
}

int main(void)
{
	/* the harness handles Ctrl-C and still needs us for its teardown; SIGTERM ends us */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	int sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0)
		die("signalfd");
	fcntl(0, F_SETFD, FD_CLOEXEC);
	fcntl(1, F_SETFD, FD_CLOEXEC);

	size_t cap = 1 << 16, have = 0;
	char *req = malloc(cap);
	static char buf[1 << 16];
	int stdin_open = 1;
	struct pollfd *fds = NULL;
	struct child **owner = NULL;
	int *kind = NULL;
	size_t fds_cap = 0;

	while (stdin_open || children) {
		size_t count = 0;
		size_t want = 2;
		for (struct child *c = children; c; c = c->next)
			want += 4;
		if (want > fds_cap) {
			fds_cap = want * 2;
			fds = realloc(fds, fds_cap * sizeof(*fds));
			owner = realloc(owner, fds_cap * sizeof(*owner));
			kind = realloc(kind, fds_cap * sizeof(*kind));
		}
		fds[count] = (struct pollfd){ .fd = sfd, .events = POLLIN };
		owner[count] = NULL;
		kind[count++] = 0;
		if (stdin_open) {
			fds[count] = (struct pollfd){ .fd = 0, .events = POLLIN };
			owner[count] = NULL;
			kind[count++] = 1;
		}
		for (struct child *c = children; c; c = c->next) {
			/* the exec report first: 'F' must come before anything else about this child */
			if (c->errpipe >= 0) {
				fds[count] = (struct pollfd){ .fd = c->errpipe, .events = POLLIN };
				owner[count] = c;
				kind[count++] = 3;
			}
			for (int s = 1; s <= 2; s++)
				if (c->out[s] >= 0) {
					fds[count] = (struct pollfd){ .fd = c->out[s], .events = POLLIN };
					owner[count] = c;
					kind[count++] = 3 + s;
				}
			if (c->in >= 0 && c->pending_len > 0) {
				fds[count] = (struct pollfd){ .fd = c->in, .events = POLLOUT };
				owner[count] = c;
				kind[count++] = 2;
			}
		}
		if (poll(fds, count, -1) < 0) {
			if (errno == EINTR)
				continue;
			die("poll");
		}
		for (size_t i = 0; i < count; i++) {
			if (!fds[i].revents)
				continue;
			struct child *c = owner[i];
			if (kind[i] == 0) {
				struct signalfd_siginfo si;
				while (read(sfd, &si, sizeof(si)) > 0)
					;
			} else if (kind[i] == 1) {
				if (have == cap)
					req = realloc(req, cap *= 2);
				ssize_t n = read(0, req + have, cap - have);
				if (n <= 0) {
					if (n < 0 && errno == EINTR)
						continue;
					/* the harness is gone: end what it started */
					stdin_open = 0;
					for (struct child *k = children; k; k = k->next)
						if (k->pid)
							kill(k->pid, SIGTERM);
					continue;
				}
				have += (size_t)n;
				size_t at = 0;
				while (have - at >= 9) {
					uint32_t len, id;
					memcpy(&len, req + at, 4);
					if (len < 5)
						exit(2);
					if (have - at < 4 + (size_t)len)
						break;
					char type = req[at + 4];
					memcpy(&id, req + at + 5, 4);
					const char *payload = req + at + 9;
					size_t plen = len - 5;
					if (type == 'S')
						spawn(id, payload, plen);
					else if (type == 'I')
						input(id, payload, plen);
					else if (type == 'K') {
						struct child *k = find(id);
						if (k && k->pid && plen >= 1)
							kill(k->pid, (unsigned char)payload[0]);
					}
					at += 4 + (size_t)len;
				}
				memmove(req, req + at, have - at);
				have -= at;
				/* spawn() may have grown the list: the descriptors gathered above still hold */
			} else if (kind[i] == 2) {
				flush_stdin(c);
			} else if (kind[i] == 3) {
				if (c->errpipe >= 0)
					read_errpipe(c);
			} else {
				int s = kind[i] - 3;
				ssize_t n = read(c->out[s], buf, sizeof(buf));
				if (n < 0 && (errno == EINTR || errno == EAGAIN))
					continue;
				if (n > 0) {
					if (!c->failed) {
						unsigned char stream = (unsigned char)s;
						event('O', c->id, &stream, 1, buf, (size_t)n);
					}
				} else {
					close_fd(&c->out[s]);
					if (!c->failed) {
						unsigned char stream = (unsigned char)s;
						event('O', c->id, &stream, 1, NULL, 0);
					}
				}
			}
		}
		reap();
		/* forget children that are reaped and whose streams ended */
		for (struct child *c = children, *next; c; c = next) {
			next = c->next;
			if (!c->pid && c->out[1] < 0 && c->out[2] < 0 && c->errpipe < 0)
				finish(c);
		}
	}
	return 0;
}

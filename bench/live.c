/* The live viewer's cost to the simulation (include/moreau/live.h; docs/benchmarks.md, "Live
 * viewer"), on Solo-12 walking under MPC (scenes/b9_solo_trot.yaml, 1 kHz):
 *
 * - the step time (mr_sim_step alone) of a loop that only steps (bare, unpaced) against one
 *   that also publishes each step and polls between steps at real time (mr_live_publish +
 *   mr_live_poll, the default pacing), first with no page, then with one page in headless
 *   Chromium connected and drawing the frames sent at up to 60 per second; repeats of STEPS
 *   steps from the initial state, alternated bare / live, each repeat's median and mean per
 *   step, the p99 and the minimum;
 * - the viewer's own work per step in the live loop: mr_live_publish, plus mr_live_poll when
 *   it does not pace (wall clock);
 * - the latency from a frame's publication to its drawing on the page (the page reports it:
 *   Date.now() when drawn − the wall clock at publication, same machine);
 * - the page's load: from starting Chromium to its first frame drawn (its first latency report),
 * and the live page's size in bytes.
 *
 * PIN=1 (the default) puts this program on CPU 0 and Chromium on CPU 1 (taskset), so that the
 * page's software rendering (SwiftShader) does not take the simulation's core; PIN=0 lets the
 * system place both. Run: make bench (or build/bench/bench/live [repeats [steps]]).
 * `live 1 N calls` under valgrind --tool=callgrind counts the instructions of the calls. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_util.h"
#include "moreau/live.h"
#include "moreau/scene.h"
#include "moreau/sim.h"

#define MAX_STEPS 20000

static double step_us[MAX_STEPS], view_us[MAX_STEPS];

typedef struct {
  double median, mean, p99, view_median, view_mean;
  double frame_us; /* the median of the `frames` longest viewer calls: those that made a frame */
  long frames;
} repeat_stats;

static long frames_published(mr_live *l) {
  static mr_live_stats st; /* large: not on the stack */
  mr_live_get_stats(l, &st);
  return st.frames_published;
}

static int cmp_desc(const void *a, const void *b) {
  return bench_cmp_double(b, a);
}

/* one repeat from the initial state, each step timed; with live, the viewer's calls timed too:
 * mr_live_publish, and mr_live_poll when it does not pace (as fast as possible: it never
 * sleeps then), wall clock; a paced poll sleeps until the step is due by design and is not
 * counted */
static repeat_stats run(mr_sim *s, mr_live *live, int paced, int steps) {
  mr_error err = {0};
  mr_sim_reset(s);
  long f0 = live ? frames_published(live) : 0;
  for (int k = 0; k < steps; ++k) {
    double t0 = bench_now_us();
    if (mr_sim_step(s, &err)) fprintf(stderr, "step %d: %s\n", k, err.msg), exit(1);
    double t1 = bench_now_us();
    step_us[k] = t1 - t0;
    view_us[k] = 0.0;
    if (!live) continue;
    mr_live_publish(live);
    double t2 = bench_now_us();
    while (mr_live_poll(live, 0.1) != MR_LIVE_STEP) {
    }
    view_us[k] = (paced ? t2 : bench_now_us()) - t1;
  }
  repeat_stats r = {0};
  for (int k = 0; k < steps; ++k)
    r.mean += step_us[k] / steps, r.view_mean += view_us[k] / steps;
  r.median = bench_median(step_us, steps);
  r.p99 = step_us[(int)(0.99 * (steps - 1))];
  r.view_median = bench_median(view_us, steps);
  if (live && (r.frames = frames_published(live) - f0) > 0) {
    qsort(view_us, (size_t)steps, sizeof *view_us, cmp_desc);
    r.frame_us = bench_median(view_us, (int)(r.frames < steps ? r.frames : steps));
  }
  return r;
}

/* a Chromium page on url (1024 x 640, shadows off: software rendering draws more of the frames
 * sent), on CPU 1 when pinned */
static pid_t open_page(const char *url, int pin) {
  pid_t pid = fork();
  if (pid == 0) {
    char prof[64];
    snprintf(prof, sizeof prof, "/tmp/moreau_bench_live_%d", (int)getpid());
    int fd = open("/dev/null", O_WRONLY);
    dup2(fd, 1), dup2(fd, 2);
    char udd[96];
    snprintf(udd, sizeof udd, "--user-data-dir=%s", prof);
    char *argv[] = {"taskset",
                    "-c",
                    "1",
                    "chromium",
                    "--headless",
                    "--no-sandbox",
                    "--use-angle=swiftshader",
                    "--enable-unsafe-swiftshader",
                    "--disable-background-networking",
                    "--disable-component-update",
                    "--disable-sync",
                    "--no-first-run",
                    udd,
                    "--window-size=1024,640",
                    (char *)url,
                    NULL};
    execvp(pin ? argv[0] : argv[3], pin ? argv : argv + 3);
    _exit(127);
  }
  return pid;
}

/* the live page's size: the body of GET / */
static long page_bytes(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
  if (connect(fd, (struct sockaddr *)&a, sizeof a)) return -1;
  char req[128], buf[65536];
  int n = snprintf(req, sizeof req,
                   "GET / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n\r\n", port);
  if (write(fd, req, (size_t)n) != n) return -1;
  long total = 0, head = -1;
  char last[4] = {0};
  for (ssize_t k; (k = read(fd, buf, sizeof buf)) > 0;) {
    for (ssize_t i = 0; i < k && head < 0; ++i) {
      memmove(last, last + 1, 3), last[3] = buf[i];
      if (!memcmp(last, "\r\n\r\n", 4)) head = total + i + 1;
    }
    total += k;
  }
  close(fd);
  return head < 0 ? -1 : total - head;
}

static int cmp_repeat(const void *a, const void *b) {
  double x = ((const repeat_stats *)a)->median, y = ((const repeat_stats *)b)->median;
  return (x > y) - (x < y);
}

/* the median, mean of medians, mean p99 and minimum median of n repeats */
static void report(const char *name, repeat_stats *r, int n, double bare_median) {
  double mean = 0, p99 = 0, vmed = 0, vmean = 0, fmed = 0, frames = 0;
  for (int k = 0; k < n; ++k)
    mean += r[k].mean / n, p99 += r[k].p99 / n, vmed += r[k].view_median / n,
        vmean += r[k].view_mean / n, fmed += r[k].frame_us / n, frames += (double)r[k].frames / n;
  qsort(r, (size_t)n, sizeof *r, cmp_repeat);
  double med = r[n / 2].median;
  printf("| %s | %.2f | %.2f | %.2f | %.2f | %.3f | %.3f | %.3f | %.0f | %.1f |\n", name, med, mean,
         p99, r[0].median, bare_median > 0 ? med / bare_median : 1.0, vmed, vmean, frames, fmed);
}

/* the latency reports after the first `skip` (those of the page's start) */
static void latency(mr_live *live, long skip) {
  mr_live_stats *st = malloc(sizeof *st);
  mr_live_get_stats(live, st);
  long kept = st->latency_count < 4096 ? st->latency_count : 4096;
  long first = st->latency_count - kept; /* the report index of latency_ms[0] */
  int n = 0;
  double mean = 0, x[4096];
  for (long k = 0; k < kept; ++k)
    if (first + k >= skip) x[n++] = st->latency_ms[k];
  for (int k = 0; k < n; ++k)
    mean += x[k] / n;
  qsort(x, (size_t)n, sizeof *x, bench_cmp_double);
  if (n)
    printf(
        "\nlatency, publication to drawing (%d frames drawn while measured): mean %.1f ms, median "
        "%.1f ms, p99 %.1f ms, min %.1f ms, max %.1f ms\n",
        n, mean, x[n / 2], x[(int)(0.99 * (n - 1))], x[0], x[n - 1]);
  printf("frames: %ld published, %ld sent, %ld drawn and reported\n", st->frames_published,
         st->frames_sent, st->latency_count);
  free(st);
}

/* "calls" (under valgrind --tool=callgrind): steps with a frame published after every one
 * (fps 1000 and steps slower than 1 ms under valgrind), as fast as possible: the instruction
 * counts of mr_sim_step, mr_live_publish and mr_live_poll per call, repeatable */
static int calls(mr_sim *s, int steps) {
  mr_error err = {0};
  mr_live_options o = mr_live_options_default();
  o.realtime = 0, o.fps = 1000;
  mr_live *l = mr_live_create(s, &o, &err);
  if (!l) return fprintf(stderr, "%s\n", err.msg), 1;
  mr_sim_reset(s);
  for (int k = 0; k < steps; ++k) {
    while (mr_live_poll(l, 0.1) != MR_LIVE_STEP) {
    }
    if (mr_sim_step(s, &err)) return fprintf(stderr, "%s\n", err.msg), 1;
    mr_live_publish(l);
  }
  printf("%d steps, %ld frames\n", steps, frames_published(l));
  mr_live_free(l);
  return 0;
}

int main(int argc, char **argv) {
  int repeats = argc > 1 ? atoi(argv[1]) : 5, steps = argc > 2 ? atoi(argv[2]) : 3000;
  if (repeats < 1 || repeats > 50) repeats = 5;
  if (steps < 100 || steps > MAX_STEPS) steps = 3000;
  const char *pin_env = getenv("PIN");
  int pin = !pin_env || strcmp(pin_env, "0");
  mr_scene sc;
  mr_error err = {0};
  if (mr_scene_load("scenes/b9_solo_trot.yaml", &sc, &err))
    return fprintf(stderr, "%s\n", err.msg), 1;
  mr_sim *bare = mr_sim_from_scene(&sc, NULL, &err), *s = mr_sim_from_scene(&sc, NULL, &err);
  mr_sim *sf = mr_sim_from_scene(&sc, NULL, &err);
  if (!bare || !s || !sf) return fprintf(stderr, "%s\n", err.msg), 1;
  mr_live_options o = mr_live_options_default();
  o.title = "bench";
  mr_live *live = mr_live_create(s, &o, &err);
  /* a second server, not paced (as fast as possible): the viewer's calls alone */
  o.realtime = 0;
  mr_live *fast = live ? mr_live_create(sf, &o, &err) : NULL;
  if (!live || !fast) return fprintf(stderr, "%s\n", err.msg), 1;
  /* this thread on CPU 0; the servers' threads, started above, keep every CPU */
  if (pin) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(0, &set);
    sched_setaffinity(0, sizeof set, &set);
  }
  if (argc > 3 && !strcmp(argv[3], "calls")) return calls(s, steps);
  printf("Live viewer: Solo-12 walking (b9), %d repeats of %d steps, alternated; %s\n\n", repeats,
         steps, pin ? "this program on CPU 0, Chromium on CPU 1" : "not pinned");
  printf("| loop | step median µs | step mean µs | step p99 µs | min median µs | median / "
         "bare | viewer calls median µs | viewer calls mean µs | frames per repeat | viewer calls "
         "making a frame, median µs |\n");
  printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  repeat_stats rb[50], rf[50], rl[50], rp[50], rb2[50];
  /* no page: the server idle, nothing to send */
  for (int k = 0; k < repeats; ++k)
    rb[k] = run(bare, NULL, 0, steps), rf[k] = run(sf, fast, 0, steps),
    rl[k] = run(s, live, 1, steps);
  /* one page: load it, wait for its first frame drawn */
  long bytes = page_bytes(mr_live_port(live));
  double t0 = bench_now_us();
  char url[160];
  snprintf(url, sizeof url, "%s#shadows=0", mr_live_url(live));
  pid_t page = open_page(url, pin);
  mr_live_stats *st = malloc(sizeof *st);
  for (st->latency_count = 0; !st->latency_count; mr_live_get_stats(live, st)) {
    if (bench_now_us() - t0 > 300e6) return fprintf(stderr, "no page after 300 s\n"), 1;
    usleep(20000);
  }
  usleep(2000000); /* the page's start, its first frames drawn late */
  mr_live_get_stats(live, st);
  long skip = st->latency_count;
  free(st);
  double ready_s = 1e-6 * (bench_now_us() - t0);
  for (int k = 0; k < repeats; ++k)
    rb2[k] = run(bare, NULL, 0, steps), rp[k] = run(s, live, 1, steps);
  double bm = 0;
  repeat_stats tmp[50];
  memcpy(tmp, rb, sizeof(repeat_stats) * (size_t)repeats);
  qsort(tmp, (size_t)repeats, sizeof *tmp, cmp_repeat);
  bm = tmp[repeats / 2].median;
  report("bare (no page)", rb, repeats, bm);
  report("live as fast as possible, no page", rf, repeats, bm);
  report("live in real time, no page", rl, repeats, bm);
  memcpy(tmp, rb2, sizeof(repeat_stats) * (size_t)repeats);
  qsort(tmp, (size_t)repeats, sizeof *tmp, cmp_repeat);
  double bm2 = tmp[repeats / 2].median;
  report("bare (page open, idle)", rb2, repeats, bm2);
  report("live in real time, one page drawing", rp, repeats, bm2);
  latency(live, skip);
  printf("page: %ld bytes; started Chromium to first frame drawn: %.1f s\n", bytes, ready_s);
  kill(page, SIGTERM);
  waitpid(page, NULL, 0);
  char rm[96];
  snprintf(rm, sizeof rm, "rm -rf /tmp/moreau_bench_live_%d", (int)page);
  if (system(rm)) fprintf(stderr, "could not remove the browser profile\n");
  mr_live_free(live), mr_live_free(fast);
  mr_sim_free(s), mr_sim_free(sf), mr_sim_free(bare);
  mr_scene_free(&sc);
  return 0;
}

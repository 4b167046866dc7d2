/* progress.c: progress events of a preparation, to the host's function. */
#include "deps.h"

#include <string.h>

static void emit(const struct pyhost__deps_job *job, pyhost_deps_progress *ev) {
  ev->who = job->who ? job->who : "";
  job->progress(job->progress_ctx, ev);
}

void pyhost__deps_report(const struct pyhost__deps_job *job, int phase, const char *package,
                         long done, long total, const char *line, const char *env) {
  if (!job->progress) return;
  pyhost_deps_progress ev;
  memset(&ev, 0, sizeof ev);
  ev.phase = phase;
  ev.package = package ? package : "";
  ev.done = done;
  ev.total = total;
  ev.line = line ? line : "";
  ev.env = env ? env : "";
  emit(job, &ev);
}

void pyhost__deps_report_ready(const struct pyhost__deps_job *job, const char *env, long count,
                               int fresh) {
  if (!job->progress) return;
  pyhost_deps_progress ev;
  memset(&ev, 0, sizeof ev);
  ev.phase = PYHOST_DEPS_READY;
  ev.package = ev.line = "";
  ev.done = ev.total = count;
  ev.env = env;
  ev.fresh = fresh;
  emit(job, &ev);
}

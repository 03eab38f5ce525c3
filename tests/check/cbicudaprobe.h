/* cudabatchinfer tests: is there a GPU the CUDA backend can run on?
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Suites register their device tests only where one is, and their
 * "without a GPU" tests only where none is, so that `Checks: N` counts
 * what really ran and no test passes by returning early.
 */
#pragma once

#include <errno.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <glib.h>

#include "cbiengine.h"

/* The probe itself: why the CUDA backend cannot run, or %NULL. */
static inline gchar *
cbi_test_cuda_probe (void)
{
  GError *error = NULL;
  gboolean fallback;
  CbiEngine *e;
  gchar *why;

  e = cbi_engine_new (cbi_default_model_new (), CBI_BACKEND_CUDA, 0, 0,
      &fallback, &error);
  if (e) {
    cbi_engine_free (e);
    return NULL;
  }
  why = g_strdup (error->message);
  g_error_free (error);
  return why;
}

/* Returns: (transfer full) (nullable): why the CUDA backend cannot run
 * here, or %NULL when it can.
 *
 * CUDA does not survive fork(): once this process has initialised the
 * driver, check's forked tests could not use it. So the probe runs in a
 * child of its own and sends its answer back through a pipe. */
static inline gchar *
cbi_test_cuda_unavailable (void)
{
  GString *answer;
  gchar buf[256];
  gssize got;
  gint fds[2];
  pid_t pid;

  if (!cbi_engine_has_cuda ())
    return g_strdup ("this build has no CUDA backend");
  if (pipe (fds) != 0)
    return g_strdup_printf ("pipe: %s", g_strerror (errno));
  pid = fork ();
  if (pid == 0) {
    /* "+" for a usable device, else "-" and the reason */
    gchar *why = cbi_test_cuda_probe ();
    gchar *text0 = g_strconcat (why ? "-" : "+", why, NULL);
    const gchar *text = text0;
    gsize left = strlen (text);

    close (fds[0]);
    while (left > 0 && (got = write (fds[1], text, left)) > 0) {
      text += got;
      left -= got;
    }
    g_free (why);
    g_free (text0);
    _exit (0);
  }
  close (fds[1]);
  answer = g_string_new (NULL);
  if (pid < 0)
    g_string_printf (answer, "fork: %s", g_strerror (errno));
  else {
    while ((got = read (fds[0], buf, sizeof (buf))) > 0)
      g_string_append_len (answer, buf, got);
    waitpid (pid, NULL, 0);
  }
  close (fds[0]);
  if (answer->len > 0 && answer->str[0] == '+') {
    g_string_free (answer, TRUE);
    return NULL;
  }
  if (answer->len == 0)
    g_string_assign (answer, "-the probe died");
  g_string_erase (answer, 0, 1);
  return g_string_free (answer, FALSE);
}

/* Whether a usable CUDA device is here; where there is none, says that
 * the tests @what are left out, and why. */
static inline gboolean
cbi_test_have_cuda (const gchar * what)
{
  gchar *why = cbi_test_cuda_unavailable ();

  if (why == NULL)
    return TRUE;
  g_print ("SKIP %s: %s\n", what, why);
  g_free (why);
  return FALSE;
}

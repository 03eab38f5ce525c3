/* cudabatchinfer tests: ask a question of CUDA in a child process
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * CUDA does not survive fork(): once a process has initialised the
 * driver, the tests check forks from it cannot use the device (every
 * call returns cudaErrorInitializationError). A suite that must know
 * whether there is a device before it registers its tests asks in a
 * child of its own, which sends its answer back through a pipe.
 */
#pragma once

#include <errno.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <glib.h>

/* A probe: why the thing asked about is not usable, or %NULL when it
 * is. Runs in the child. */
typedef gchar *(*CbiTestProbe) (void);

/* Returns: (transfer full) (nullable): what @probe returned, run in a
 * child process, or why the child gave no answer. */
static inline gchar *
cbi_test_probe_in_child (CbiTestProbe probe)
{
  GString *answer;
  gchar buf[256];
  gssize got;
  gint fds[2];
  pid_t pid;

  if (pipe (fds) != 0)
    return g_strdup_printf ("pipe: %s", g_strerror (errno));
  pid = fork ();
  if (pid == 0) {
    /* "+" when usable, else "-" and the reason */
    gchar *why = probe ();
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
    g_string_printf (answer, "-fork: %s", g_strerror (errno));
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

/* GStreamer cudabatchinfer: what every public header of the library needs
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#ifndef GST_CUDABATCHINFER_API
# ifdef BUILDING_GST_CUDABATCHINFER
#  define GST_CUDABATCHINFER_API __attribute__ ((visibility ("default")))
# else
#  define GST_CUDABATCHINFER_API
# endif
#endif

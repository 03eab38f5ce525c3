#!/usr/bin/env python3
"""Checks bench/onednn-profile.py's reading of oneDNN verbose logs: the
operations it counts for each primitive, the batch it finds in a log and
the floors it prints, on logs written here in oneDNN 2.6's format, and
the same read from oneDNN 3.7's (Debian 13).

scripts/test.sh runs it; it prints one line per check and
`N passed, N failed`, and exits 1 when one fails. Only Python's standard
library: `python3 tests/bench/onednn-profile-check.py`.
"""
import contextlib
import importlib.util
import io
import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
spec = importlib.util.spec_from_file_location(
    "onednn_profile", os.path.join(ROOT, "bench", "onednn-profile.py"))
profile = importlib.util.module_from_spec(spec)
spec.loader.exec_module(profile)

PREFIX = "onednn_verbose,exec,cpu,"


def conv(shape, ms, impl="brgconv_1x1:avx512_core"):
    return (PREFIX + "convolution,%s,forward_inference,"
            "src_f32::blocked:acdb:f0 wei_f32:p:blocked:Acdb48a:f0 "
            "dst_f32::blocked:acdb:f0,attr-scratchpad:user "
            "attr-post-ops:eltwise_linear:0.166667:0.5+eltwise_clip:0:1 ,"
            "alg:convolution_direct,%s,%s" % (impl, shape, ms))


def binary(shape, ms):
    return (PREFIX + "binary,jit:uni,undef,src_f32::blocked:acdb:f0 "
            "src_f32::blocked:acdb:f0 dst_f32::blocked:acdb:f0,"
            "attr-scratchpad:user ,alg:binary_mul,%s,%s" % (shape, ms))


def primitive(line):
    p = profile.parse_exec(line)
    assert p is not None, line
    return p


# a convolution and a matmul as oneDNN 3.7 logs them
V3_CONV = ("onednn_verbose,v1,primitive,exec,cpu,convolution,"
           "brg_conv_fwd:avx512_core,forward_inference,src:f32:a:blocked:acdb::f0"
           " wei:f32:a:blocked:Acdb16a::f0 bia:f32::blocked:a::f0 "
           "dst:f32:a:blocked:acdb::f0,attr-scratchpad:user "
           "attr-post-ops:eltwise_relu,alg:convolution_direct,"
           "mb8_ic8oc16_ih16oh16kh3sh1dh0ph1_iw16ow16kw3sw1dw0pw1,0.0200195")
V3_MATMUL = ("onednn_verbose,v1,primitive,exec,cpu,matmul,"
             "brg_matmul:avx512_core,undef,src:f32::blocked:ab::f0 "
             "wei:f32::blocked:ab::f0 dst:f32::blocked:ab::f0,"
             "attr-scratchpad:user,,8x64:64x10:8x10,0.01")


def test_a_1x1_convolution_counts_two_operations_per_multiply_add():
    p = primitive(conv("mb8_ic64oc128_ih28oh28kh1sh1dh0ph0_iw28ow28kw1sw1"
                       "dw0pw0", 0.5))
    assert p.category() == "convolution 1x1", p.category()
    assert p.flop() == 2 * 8 * 64 * 128 * 28 * 28, p.flop()


def test_a_depthwise_convolution_counts_one_input_channel_per_output():
    p = primitive(conv("g32mb8_ic32oc32_ih112oh56kh3sh2dh0ph1_iw112ow56kw3"
                       "sw2dw0pw1", 0.7, "brdgmm_dw:avx512_core"))
    assert p.category() == "convolution depthwise", p.category()
    assert p.flop() == 2 * 8 * 32 * 56 * 56 * 9, p.flop()


def test_a_strided_3x3_convolution_counts_its_output_size_and_window():
    p = primitive(conv("mb8_ic3oc16_ih224oh112kh3sh2dh0ph1_iw224ow112kw3sw2"
                       "dw0pw1", 0.8, "brgconv:avx512_core"))
    assert p.category() == "convolution other", p.category()
    assert p.flop() == 2 * 8 * 3 * 16 * 112 * 112 * 9, p.flop()


def test_a_3d_convolution_counts_its_depth():
    p = primitive(conv("mb1_ic4oc8_id6od6kd3sd1dd0pd1_ih10oh10kh3sh1dh0ph1"
                       "_iw10ow10kw3sw1dw0pw1", 0.1, "gemm:jit"))
    assert p.flop() == 2 * 4 * 8 * 6 * 3 * 10 * 10 * 9, p.flop()


def test_a_matmul_counts_rows_columns_and_depth():
    p = primitive(PREFIX + "matmul,brg:avx512_core,undef,src_f32::blocked:ab"
                  ":f0 wei_f32::blocked:ab:f0 dst_f32::blocked:ab:f0,"
                  "attr-scratchpad:user ,,8x1280:1280x4:8x4,0.02")
    assert p.flop() == 2 * 8 * 1280 * 4, p.flop()


def test_an_element_wise_primitive_counts_no_products():
    p = primitive(binary("8x512x7x7:8x512x1x1", 0.1))
    assert p.category() == "binary" and p.flop() == 0


# one batch: a different first layer, then two identical ones, so that a
# log ends with two identical calls and a search for the shortest sequence
# repeated twice would take one call for a batch
BATCH = [binary("8x256x14x14:8x256x1x1", 0.25),
         conv("mb8_ic256oc256_ih14oh14kh1sh1dh0ph0_iw14ow14kw1sw1dw0pw0",
              1.0),
         conv("mb8_ic256oc256_ih14oh14kh1sh1dh0ph0_iw14ow14kw1sw1dw0pw0",
              1.0)]


def test_a_onednn3_log_line_reads_as_its_onednn2_form():
    p = primitive(V3_CONV)
    assert p.kind == "convolution" and p.impl == "brg_conv_fwd:avx512_core", \
        (p.kind, p.impl)
    assert p.category() == "convolution other", p.category()
    assert p.flop() == 2 * 8 * 8 * 16 * 16 * 16 * 9, p.flop()
    assert abs(p.ms - 0.0200195) < 1e-9, p.ms
    m = primitive(V3_MATMUL)
    assert m.flop() == 2 * 8 * 64 * 10, m.flop()
    info = "onednn_verbose,v1,primitive,info,template:operation,engine"
    assert profile.parse_exec(info) is None


def test_a_onednn3_log_gives_its_batch():
    text = "\n".join(["onednn_verbose,v1,info,oneDNN v3.7.2"]
                      + [V3_CONV, V3_MATMUL] * 3)
    calls = profile.exec_lines(text)
    assert len(calls) == 6, len(calls)
    batch = profile.batches_of(calls, 3)
    assert len(batch) == 3 and len(batch[0]) == 2, batch


def log_of(batches, times=None):
    """Start-up lines, then `batches` batches; batch b's calls take the
    given times scaled by times[b] (1 when not given)."""
    lines = ["onednn_verbose,info,oneDNN v2.6.0",
             PREFIX + "reorder,jit:uni,undef,src_f32::blocked:abcd:f0 "
             "dst_f32::blocked:Acdb16a:f0,,,16x3x3x3,0.003"]
    for b in range(batches):
        scale = times[b] if times else 1.0
        for line in BATCH:
            head, ms = line.rsplit(",", 1)
            lines.append("%s,%g" % (head, float(ms) * scale))
        lines.append("gst: some other line between batches")
    return "\n".join(lines) + "\n"


def test_the_batch_is_the_sequence_repeated_batches_times_not_a_shorter():
    calls = profile.exec_lines(log_of(5))
    runs = profile.batches_of(calls, 4)
    assert len(runs) == 4, len(runs)
    assert all(len(run) == 3 for run in runs), [len(r) for r in runs]
    assert runs[0][0].kind == "binary"


def test_a_log_with_fewer_repeats_than_batches_gives_no_batch():
    assert profile.batches_of(profile.exec_lines(log_of(3)), 4) == []


def run_main(argv):
    out = io.StringIO()
    saved = sys.argv
    sys.argv = ["onednn-profile.py"] + argv
    try:
        with contextlib.redirect_stdout(out):
            profile.main()
    finally:
        sys.argv = saved
    return out.getvalue()


def test_each_call_takes_its_fastest_time_and_the_floor_its_peak_time():
    # the last batch is twice as slow: the fastest calls are the 1.0 ms
    # ones; 2 x 2*8*256*256*14*14 flop at 100 GFLOP/s and 0.25 ms of binary
    with tempfile.NamedTemporaryFile("w", suffix=".log", delete=False) as f:
        f.write(log_of(4, times=[1, 1, 1, 2]))
        f.write("fps=1 batch-ms-median=3.000 engine-ms-median=2.750\n")
        name = f.name
    try:
        out = run_main(["--log", name, "--batches", "4", "--peak", "100"])
    finally:
        os.unlink(name)
    flop = 2 * (2 * 8 * 256 * 256 * 14 * 14)
    floor = flop / 100e9 * 1e3 + 0.25
    assert "all oneDNN                    3     2.250" in out, out
    assert "floor, every other convolution and product at the FMA peak, " \
        "the rest as measured: %.2f ms a batch (oneDNN now 2.25)" % floor \
        in out, out
    # median batch 2.25 ms against the engine's 2.75
    assert "the engine's own                    0.500" in out, out


def main():
    tests = [(name, fn) for name, fn in globals().items()
             if name.startswith("test_") and callable(fn)]
    passed = failed = 0
    for name, fn in tests:
        try:
            fn()
        except AssertionError as e:
            failed += 1
            print("FAIL %s: %s" % (name, str(e)[:2000]))
        else:
            passed += 1
            print("PASS %s" % name)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

import io

from ccfair.progress import ProgressBar, format_clock


class FakeClock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_format_clock():
    assert format_clock(0) == "0:00"
    assert format_clock(75.2) == "1:15"
    assert format_clock(3725) == "1:02:05"


def test_bar_draws_eta_and_throttles():
    stream, clock = io.StringIO(), FakeClock()
    bar = ProgressBar(stream, label="run", width=10, max_rate_hz=10, clock=clock)
    clock.now += 2.0
    bar(0.25)  # 2 s for a quarter: 6 s to go
    assert "[##........]" in stream.getvalue() and " 25%" in stream.getvalue()
    assert "0:02 elapsed" in stream.getvalue() and "ETA 0:06" in stream.getvalue()
    for _ in range(100):  # within 0.1 s: no redraw
        clock.now += 0.0005
        bar(0.3)
    assert bar.draws == 1
    clock.now += 0.2
    bar(0.5)
    assert bar.draws == 2
    bar(1.0)  # the end is always drawn
    assert bar.draws == 3 and "100%" in stream.getvalue()
    bar.close()
    assert stream.getvalue().endswith("\r")
    last = stream.getvalue().rsplit("\r", 2)[-2]
    assert last.strip() == ""  # erased


def test_close_without_drawing_writes_nothing():
    stream = io.StringIO()
    ProgressBar(stream).close()
    assert stream.getvalue() == ""

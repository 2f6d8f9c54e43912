"""The scales every reproduced study defines, smallest first (a module without imports, so that the command
line's parser reads them without loading the studies):

- ``quick``: the paper's structure with fewer points, repetitions and shorter runs, in a minute or two; the
  test suite runs it and checks its stored scorecard;
- ``standard``: sized so that each finding's 95 % interval decides (agrees or disagrees) wherever the full
  scale would, from the quick scale's measured spreads, in about 30 minutes on 2 idle cores (Philip et al.'s
  longer, as its setup says); its scorecards are the published reference results;
- ``full``: the paper's.
"""

SCALES = ("quick", "standard", "full")
DEFAULT_SCALE = "quick"

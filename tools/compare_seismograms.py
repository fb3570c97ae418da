#!/usr/bin/env python3
"""Relative L2 difference of two runs' seismograms (HDF5 /seismograms/<field>, [receiver][sample]),
over the samples both have: the reflection measurement of bench/results/2026-11-22-cpu-tti-layer.md.

  /usr/bin/python3 tools/compare_seismograms.py out/tti-layer-small.h5 out/tti-layer-big.h5
"""
import argparse

import h5py
import numpy as np

p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
p.add_argument("test", help="the run to judge (e.g. the small domain)")
p.add_argument("reference", help="the reference run (e.g. the large domain)")
p.add_argument("--field", default="p", help="seismogram dataset (default p)")
a = p.parse_args()
t = np.array(h5py.File(a.test, "r")["seismograms/" + a.field])
r = np.array(h5py.File(a.reference, "r")["seismograms/" + a.field])
n = min(t.shape[1], r.shape[1])
t, r = t[:, :n], r[:, :n]
per = np.linalg.norm(t - r, axis=1) / np.linalg.norm(r, axis=1)
print("relative L2 %.3e, worst receiver %.3e (receiver %d of %d)" %
      (np.linalg.norm(t - r) / np.linalg.norm(r), per.max(), per.argmax(), len(per)))

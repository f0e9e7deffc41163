"""The trucks of TSBS's iot use case (truck.go, readings.go, diagnostics.go in TSBS's
``pkg/data/usecases/iot``): each truck's tags, and the walks its fields take epoch by epoch.

Semantics (taken from TSBS's Go source):

* Trucks ``truck_0 .. truck_{scale-1}``. Each draws once a model (F-150, G-2000, H-2), a fleet
  (4), a driver (6) and a device version (4); its load_capacity, fuel_capacity and
  nominal_fuel_consumption tags are its model's (`MODELS`), written as TSBS prints a float32 tag
  (``"2000"``, ``"15"``). The eight tags are in `IOT_TAGS` order, name first.
* Each truck has one distribution per field (readings.go, diagnostics.go); every value is cut to
  its precision as Go's ``float64(int(v * 10^p)) / 10^p`` does (truncation toward zero):

  =================  ===========================  ==============  ============  =========
  field              clamped random walk, step     bounds          start         precision
  =================  ===========================  ==============  ============  =========
  latitude           uniform on [-0.005, 0.005)   [-90, 90]       U[0, 90)      5
  longitude          uniform on [-0.005, 0.005)   [-180, 180]     U[0, 180)     5
  elevation          uniform on [-10, 10)         [0, 5000]       U[0, 500)     0
  velocity           uniform on [-10, 10)         [0, 100]        0             0
  heading            uniform on [-5, 5)           [0, 360]        U[0, 360)     0
  grade              uniform on [-5, 5)           [0, 100]        0             0
  fuel_consumption   uniform on [-5, 5)           [0, 50]         25            1
  fuel_state         uniform on [-0.001, 0)       [0, 1]          1             1
  status             normal N(0, 1)               [0, 5]          0             0 (int64)
  =================  ===========================  ==============  ============  =========

  fuel_state is refilled to 1 whenever its walk hits 0 (TSBS's customFuelDistribution).
  current_load is TSBS's lazy distribution: each epoch each truck's "motive" is uniform on
  [0, 1) and at 0.95 or above the load is redrawn uniform on [0, 5000), precision 0. In TSBS
  the redrawn uniform is one package-level ``loadUD`` shared by every truck, and every truck's
  current_load reads that shared value; so all trucks report the same current_load in an epoch:
  0 until the first redraw, then the value drawn by the last truck that redrew (kept while none
  does). This port keeps that: one value per epoch, redrawn when any truck's motive fires.

The random draws are in ingestbench.tsbs.trucks (generators ``default_rng(seed)``, [0] and [1]).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit


class Model(NamedTuple):
    """A truck model's capacity tags, as TSBS prints its float32 values."""

    load_capacity: str
    fuel_capacity: str
    nominal_fuel_consumption: str


#: TSBS's truck models (truck.go), in the order a truck's model index refers to.
MODELS: dict[str, Model] = {
    "F-150": Model("2000", "200", "15"),
    "G-2000": Model("5000", "300", "19"),
    "H-2": Model("1500", "150", "12"),
}
FLEETS: tuple[str, ...] = ("East", "West", "North", "South")
DRIVERS: tuple[str, ...] = ("Derek", "Rodney", "Albert", "Andy", "Seth", "Trish")
DEVICE_VERSIONS: tuple[str, ...] = ("v1.0", "v1.5", "v2.0", "v2.3")


#: The readings walks (readings.go): step low, step high, min, max, 10^precision.
_STEP_LO = np.array([-0.005, -0.005, -10.0, -10.0, -5.0, -5.0, -5.0])
_STEP_HI = np.array([0.005, 0.005, 10.0, 10.0, 5.0, 5.0, 5.0])
_MIN = np.array([-90.0, -180.0, 0.0, 0.0, 0.0, 0.0, 0.0])
_MAX = np.array([90.0, 180.0, 5000.0, 100.0, 360.0, 100.0, 50.0])
_PRECISION = np.array([1e5, 1e5, 1.0, 1.0, 1.0, 1.0, 10.0])
#: Uniforms per truck and epoch: 7 readings steps, the fuel step, the load motive.
_UNIFORMS = 9
_LOAD_THRESHOLD = 1 - 0.05  # TSBS's 1 - loadChangeChance
_MAX_LOAD = 5000.0


@njit(cache=True, nogil=True)
def _walk(state, load, uniforms, normals, out_r, out_d):
    """Advance every walk one epoch per row of `normals`, writing each epoch's values at TSBS's
    precision. state: (9, n) latitude .. fuel_consumption, fuel_state, status; load: (1,) the
    shared current_load; uniforms: (k, 9n + 1); normals: (k, n); out_r: (7, k n), out_d:
    (3, k n), epoch-major columns."""
    k, n = normals.shape
    for e in range(k):
        base = e * n
        for f in range(7):
            lo, width = _STEP_LO[f], _STEP_HI[f] - _STEP_LO[f]
            low, high, scale = _MIN[f], _MAX[f], _PRECISION[f]
            for t in range(n):
                s = state[f, t] + (uniforms[e, f * n + t] * width + lo)
                if s > high:
                    s = high
                if s < low:
                    s = low
                state[f, t] = s
                out_r[f, base + t] = np.trunc(s * scale) / scale + 0.0  # +0.0: Go has no -0
        fired = False
        for t in range(n):
            s = state[7, t] + (uniforms[e, 7 * n + t] * 0.001 - 0.001)
            if s > 1.0:
                s = 1.0
            if s < 0.0:
                s = 0.0
            if s == 0.0:  # refuelled when empty
                s = 1.0
            state[7, t] = s
            out_d[0, base + t] = np.trunc(s * 10.0) / 10.0
            if uniforms[e, 8 * n + t] >= _LOAD_THRESHOLD:
                fired = True
            s = state[8, t] + normals[e, t]
            if s > 5.0:
                s = 5.0
            if s < 0.0:
                s = 0.0
            state[8, t] = s
            out_d[2, base + t] = np.trunc(s)
        if fired:
            load[0] = uniforms[e, 9 * n] * _MAX_LOAD
        current = np.trunc(load[0])
        for t in range(n):
            out_d[1, base + t] = current


class Trucks:
    """Every truck's tags and walks; `values(stop)` makes the epochs up to stop - 1."""

    def __init__(self, scale: int, seed: int):
        rng = np.random.default_rng(seed)
        n = self.n = scale
        self.model = rng.integers(0, len(MODELS), n)
        fleet = rng.integers(0, len(FLEETS), n)
        driver = rng.integers(0, len(DRIVERS), n)
        device = rng.integers(0, len(DEVICE_VERSIONS), n)
        #: (8, n) int32 indices into each tag's dictionary, in IOT_TAGS order.
        self.tags = np.stack([np.arange(n), fleet, driver, self.model, device,
                              self.model, self.model, self.model]).astype(np.int32)  # fmt: skip
        self.state = np.zeros((9, n))
        self.state[0] = rng.random(n) * 90.0
        self.state[1] = rng.random(n) * 180.0
        self.state[2] = rng.random(n) * 500.0
        self.state[4] = rng.random(n) * 360.0
        self.state[6] = 25.0  # fuel_consumption: maxFuelConsumption / 2
        self.state[7] = 1.0  # fuel_state: full
        self.load = np.zeros(1)  # current_load: the shared loadUD's value, 0 until drawn
        uniforms, normals, _batches = np.random.SeedSequence(seed).spawn(3)
        self.uniforms = np.random.default_rng(uniforms)
        self.normals = np.random.default_rng(normals)
        self.made = 0  # epochs whose values have been made

    def values(self, stop: int) -> tuple[np.ndarray, np.ndarray]:
        """Epochs made..stop-1: readings (7, k n) and diagnostics (3, k n), epoch-major."""
        n, k = self.n, stop - self.made
        out_r, out_d = np.empty((7, k * n)), np.empty((3, k * n))
        first = 0
        if self.made == 0 and k > 0:  # epoch 0: the start values
            out_r[:, :n] = (
                np.trunc(self.state[:7] * _PRECISION[:, None]) / _PRECISION[:, None] + 0.0
            )
            out_d[:, :n] = np.array([[1.0], [0.0], [0.0]])  # full, no load, status 0
            first = 1
        if k > first:
            uniforms = self.uniforms.random((k - first, _UNIFORMS * n + 1))
            normals = self.normals.standard_normal((k - first, n))
            _walk(self.state, self.load, uniforms, normals, out_r[:, first * n :],
                  out_d[:, first * n :])  # fmt: skip
        self.made = stop
        return out_r, out_d

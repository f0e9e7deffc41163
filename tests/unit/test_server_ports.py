"""Ports the embedded server is started on."""

from ingestbench.server import process


def test_picked_ports_are_distinct_even_when_free_port_repeats(monkeypatch):
    picks = iter([5000, 5000, 5001, 5000, 5002, 5003])
    monkeypatch.setattr(process, "free_port", lambda: next(picks))
    ports = process.pick_ports({})
    assert sorted(ports.values()) == [5000, 5001, 5002, 5003]


def test_fixed_ports_are_kept_and_not_reused(monkeypatch):
    picks = iter([9000, 6000, 6001, 6002])
    monkeypatch.setattr(process, "free_port", lambda: next(picks))
    ports = process.pick_ports({"http": 9000, "pg": None})
    assert ports["http"] == 9000
    assert len(set(ports.values())) == 4

"""The fault tests' shared fixtures (defined with the first fault tests), for every module here."""

from tests.faults.test_faults import big_dataset, private_cache  # noqa: F401 (fixtures)

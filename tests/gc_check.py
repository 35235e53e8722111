"""A test file for the pytest runs ssw starts (a gates' stage, a bench's grading run): it passes
where the collector is on, collects a cycle the test makes, and finds pytest's own objects
frozen out of the collector's sight (ADR 0019 addendum)."""

GC_TEST = """
import gc
import weakref

import _pytest.main


class Node:
    pass


def test_a_cycle_is_collected_and_pytests_objects_are_frozen():
    assert gc.isenabled()
    node = Node()
    node.me = node
    gone = weakref.ref(node)
    del node
    gc.collect()
    assert gone() is None
    frozen = _pytest.main.__dict__
    assert gc.get_freeze_count() > 0 and not any(o is frozen for o in gc.get_objects())
"""

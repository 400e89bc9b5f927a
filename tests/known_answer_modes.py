"""A pytest plugin for tests/test_specs.py: after collection, one line per selected test,
``KNOWN_ANSWER<tab><node id><tab><mode>...``, tab-separated (node ids hold spaces): the
modes its known_answer marks name, none when it has no such mark. Loaded with
``-p known_answer_modes`` and tests/ on PYTHONPATH."""


def pytest_collection_finish(session):
    for item in session.items:
        modes = [mode for mark in item.iter_markers("known_answer") for mode in mark.args]
        print("KNOWN_ANSWER", item.nodeid, *modes, sep="\t")

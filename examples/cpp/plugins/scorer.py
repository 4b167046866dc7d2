# The plugin of examples/cpp/plugin_host.cpp: reads JSON, scales with the host's function.
import json

import app


def score(text, weight=1):
    return app.scale(sum(json.loads(text))) * weight

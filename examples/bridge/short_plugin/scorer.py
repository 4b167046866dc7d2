# A plugin of examples/bridge/short_host.c: it imports json and calls the host.
import json

import app


def score(text, weight=1):
    return app.scale(sum(json.loads(text)), weight)

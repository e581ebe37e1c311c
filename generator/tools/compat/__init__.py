"""``bcfg compat``: will FX quantization honour a QConfigMapping on one of the project's backends.

``command`` finds the backend in the specs, loads the user's mapping (and
model) and runs ``live.compat``; ``render`` prints the verdicts as a text
table, markdown or JSON.
"""

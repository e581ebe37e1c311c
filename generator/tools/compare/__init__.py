"""``bcfg compare``: two PT2E quantizers' annotations, node by node, on probes and models."""

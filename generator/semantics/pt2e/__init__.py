"""PT2E quantizers from specs: the declarations (``quantizers``), each pattern's rule
(``rules``: derive, check, build), the checks of its pt2e keys against the key table
(``keys``), the ATen mapping (``mapping``), dtypes (``dtypes``) and the tried order
(``order``)."""

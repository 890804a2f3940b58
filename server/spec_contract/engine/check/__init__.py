"""Stage 5, findings: each model class checked against the contract (stage 4, ``engine.contract``), the
capability gates and Protocols, hover's status, and the baseline."""

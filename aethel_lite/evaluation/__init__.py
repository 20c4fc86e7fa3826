"""Scoring: metrics, statistics, development/test splits and the runner behind ``aethel eval``."""

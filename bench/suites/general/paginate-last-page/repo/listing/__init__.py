"""Filtering, sorting and paginating lists of records for the API."""

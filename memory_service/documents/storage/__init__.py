"""SQLAlchemy repositories, every statement built by kernel/storage/scoped.py."""

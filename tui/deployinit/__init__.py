"""`stacktop init`: a config written from a deployment's own files (kolla-ansible, OpenStack-Ansible).

Each reader (kolla.py, osa.py) turns a deployment folder into a Plan; render.py turns a Plan into TOML with no
secret in it; write.py writes the TOML and the secret files (mode 600) and checks the result with stacktop's
own config loader. A missing or ambiguous value is an InitError: one line naming the file and the key."""

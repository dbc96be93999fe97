"""Agent processes: the replay's attempts run in processes of their own, so whatever the agent
does to its interpreter ends its case only.

- ``protocol``: the messages and settings both sides use (the eval's and the process's);
- ``agent_process``: the eval's side, starting processes and sending them cases;
- ``dispatch``: what is sent where from one thread, and what a process's death means;
- ``agent_child``: what runs in an agent process;
- ``preload`` / ``http_clients``: what the fork server imports before forking them.
"""

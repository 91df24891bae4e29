<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>NewRunDialog</name>
    <message>
        <source>New sharded run</source>
        <translation>新建分片任务</translation>
    </message>
    <message>
        <source>Hosts (jobs at once on each; default its GPU count)</source>
        <translation>主机（每台同时运行的作业数；默认为其 GPU 数量）</translation>
    </message>
    <message>
        <source>Host</source>
        <translation>主机</translation>
    </message>
    <message>
        <source>Jobs at once</source>
        <translation>同时作业数</translation>
    </message>
    <message>
        <source>python work.py --from {1} --to {2}</source>
        <translation>python work.py --from {1} --to {2}</translation>
    </message>
    <message>
        <source>Command on each host</source>
        <translation>每台主机上的命令</translation>
    </message>
    <message>
        <source>Id range</source>
        <translation>ID 范围</translation>
    </message>
    <message>
        <source>List of inputs (paths on the hosts)</source>
        <translation>输入列表（主机上的路径）</translation>
    </message>
    <message>
        <source>in</source>
        <comment>an id range in N shards</comment>
        <translation>分成</translation>
    </message>
    <message>
        <source>shards ({1} = first id, {2} = one past the last)</source>
        <translation>个分片（{1} = 起始 ID，{2} = 末尾 ID 的下一个）</translation>
    </message>
    <message>
        <source>one input per line, e.g. data/part-0001.jsonl</source>
        <translation>每行一个输入，例如 data/part-0001.jsonl</translation>
    </message>
    <message>
        <source>Attempts per shard</source>
        <translation>每个分片的尝试次数</translation>
    </message>
    <message>
        <source>Start run</source>
        <translation>开始任务</translation>
    </message>
</context>
<context>
    <name>RunsPage</name>
    <message>
        <source>Ansible inventory…</source>
        <translation>Ansible 清单文件…</translation>
    </message>
    <message>
        <source>Ray cluster config…</source>
        <translation>Ray 集群配置…</translation>
    </message>
    <message>
        <source>Ray start script…</source>
        <translation>Ray 启动脚本…</translation>
    </message>
    <message>
        <source>SkyPilot node pools…</source>
        <translation>SkyPilot 节点池…</translation>
    </message>
    <message>
        <source>pending</source>
        <translation>等待中</translation>
    </message>
    <message>
        <source>running</source>
        <translation>运行中</translation>
    </message>
    <message>
        <source>done</source>
        <translation>已完成</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>{seconds} s</source>
        <translation>{seconds} 秒</translation>
    </message>
    <message>
        <source>No host to run on</source>
        <translation>没有可运行的主机</translation>
    </message>
    <message>
        <source>A run splits many inputs into shards and runs them across your hosts with GNU parallel; failed shards can be rerun alone. Add a host first.</source>
        <translation>任务会把大量输入拆成分片，用 GNU parallel 在你的各台主机上运行；失败的分片可以单独重跑。请先添加主机。</translation>
    </message>
    <message>
        <source>Add a host</source>
        <translation>添加主机</translation>
    </message>
    <message>
        <source>New run…</source>
        <translation>新建任务…</translation>
    </message>
    <message>
        <source>Rerun failed shards</source>
        <translation>重跑失败分片</translation>
    </message>
    <message>
        <source>Cancel run</source>
        <translation>取消任务</translation>
    </message>
    <message>
        <source>Export fleet</source>
        <translation>导出集群</translation>
    </message>
    <message>
        <source>Run</source>
        <translation>任务</translation>
    </message>
    <message>
        <source>Shards</source>
        <translation>分片</translation>
    </message>
    <message>
        <source>Done</source>
        <translation>已完成</translation>
    </message>
    <message>
        <source>Failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>Running</source>
        <translation>运行中</translation>
    </message>
    <message>
        <source>Time</source>
        <translation>用时</translation>
    </message>
    <message>
        <source>Cost</source>
        <translation>费用</translation>
    </message>
    <message>
        <source>Input</source>
        <translation>输入</translation>
    </message>
    <message>
        <source>State</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>Host</source>
        <translation>主机</translation>
    </message>
    <message>
        <source>Exit</source>
        <translation>退出码</translation>
    </message>
    <message>
        <source>Select a shard to see its output.</source>
        <translation>选择一个分片以查看其输出。</translation>
    </message>
    <message>
        <source>Could not read the runs: {error}</source>
        <translation>无法读取任务：{error}</translation>
    </message>
    <message>
        <source>The shard&apos;s output could not be read: {error}</source>
        <translation>无法读取该分片的输出：{error}</translation>
    </message>
    <message>
        <source>Export the fleet</source>
        <translation>导出集群</translation>
    </message>
    <message>
        <source>Exported for {format} to {path}. No private key is in it: its comments say how the hosts are reached.</source>
        <translation>已导出 {format} 格式到 {path}。其中不含私钥：文件中的注释说明了如何连接各主机。</translation>
    </message>
    <message>
        <source>Exported for {format} to {path}. No private key is in it: the hosts are reached through the app&apos;s ssh config and agent.</source>
        <translation>已导出 {format} 格式到 {path}。其中不含私钥：各主机通过本应用的 ssh 配置和 agent 连接。</translation>
    </message>
</context>
</TS>

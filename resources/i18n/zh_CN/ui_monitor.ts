<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>FleetModel</name>
    <message>
        <source>connecting</source>
        <translation>连接中</translation>
    </message>
    <message>
        <source>live</source>
        <translation>在线</translation>
    </message>
    <message>
        <source>reconnecting</source>
        <translation>重连中</translation>
    </message>
    <message>
        <source>auth failed</source>
        <translation>认证失败</translation>
    </message>
    <message>
        <source>host key changed</source>
        <translation>主机密钥已变更</translation>
    </message>
    <message>
        <source>host key not trusted yet</source>
        <translation>主机密钥尚未信任</translation>
    </message>
    <message>
        <source>no NVIDIA driver</source>
        <translation>没有 NVIDIA 驱动</translation>
    </message>
    <message>
        <source>GPU lost</source>
        <translation>GPU 丢失</translation>
    </message>
    <message>
        <source>stopped</source>
        <translation>已停止</translation>
    </message>
    <message>
        <source>%n unreadable line(s) skipped</source>
        <translation>已跳过 %n 行无法读取的输出</translation>
    </message>
    <message>
        <source>Host</source>
        <translation>主机</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>GPUs</source>
        <translation>GPU 数</translation>
    </message>
    <message>
        <source>Mean util.</source>
        <translation>平均利用率</translation>
    </message>
    <message>
        <source>Max util.</source>
        <translation>最高利用率</translation>
    </message>
    <message>
        <source>Memory</source>
        <translation>显存</translation>
    </message>
    <message>
        <source>Max temp.</source>
        <translation>最高温度</translation>
    </message>
    <message>
        <source>Power</source>
        <translation>功耗</translation>
    </message>
    <message>
        <source>Cost / h</source>
        <translation>费用/小时</translation>
    </message>
    <message>
        <source>Utilisation (last 2 min)</source>
        <translation>利用率（最近 2 分钟）</translation>
    </message>
</context>
<context>
    <name>GpuPlots</name>
    <message>
        <source>Utilisation</source>
        <translation>利用率</translation>
    </message>
    <message>
        <source>Memory used / total</source>
        <translation>显存（已用 / 总量）</translation>
    </message>
    <message>
        <source>Temperature</source>
        <translation>温度</translation>
    </message>
    <message>
        <source>Power / limit</source>
        <translation>功耗 / 上限</translation>
    </message>
    <message>
        <source>Hover over a plot to read the values.</source>
        <translation>将鼠标悬停在图上可读取数值。</translation>
    </message>
    <message>
        <source>(faint line: memory total, power limit)</source>
        <translation>（浅色线：显存总量、功耗上限）</translation>
    </message>
    <message>
        <source>&lt;b&gt;{title}&lt;/b&gt; at {when} — {values}</source>
        <translation>&lt;b&gt;{title}&lt;/b&gt;，{when} — {values}</translation>
    </message>
</context>
<context>
    <name>MonitorPage</name>
    <message>
        <source>1 min</source>
        <translation>1 分钟</translation>
    </message>
    <message>
        <source>10 min</source>
        <translation>10 分钟</translation>
    </message>
    <message>
        <source>1 h</source>
        <translation>1 小时</translation>
    </message>
    <message>
        <source>24 h</source>
        <translation>24 小时</translation>
    </message>
    <message>
        <source>Monitor</source>
        <translation>监控</translation>
    </message>
    <message>
        <source>Reconnect</source>
        <translation>重新连接</translation>
    </message>
    <message>
        <source>Show</source>
        <translation>显示</translation>
    </message>
    <message>
        <source>Window</source>
        <translation>时间窗口</translation>
    </message>
    <message>
        <source>Double-click a host to see its GPUs; right-click it for a terminal, VS Code or its tunnels.</source>
        <translation>双击主机查看其 GPU；右键单击可打开终端、VS Code 或其隧道。</translation>
    </message>
    <message>
        <source>Current values</source>
        <translation>当前数值</translation>
    </message>
    <message>
        <source>Processes</source>
        <translation>进程</translation>
    </message>
    <message>
        <source>Hints</source>
        <translation>提示</translation>
    </message>
    <message>
        <source>All hosts (fleet)</source>
        <translation>全部主机（集群）</translation>
    </message>
    <message>
        <source>This computer</source>
        <translation>本机</translation>
    </message>
    <message>
        <source>Hints ({n})</source>
        <translation>提示（{n}）</translation>
    </message>
    <message>
        <source>{live} of %n hosts live, {gpus} GPUs (this computer&apos;s included)</source>
        <translation>{live}/%n 台主机在线，{gpus} 个 GPU（含本机）</translation>
    </message>
    <message>
        <source>{live} of %n hosts live, {gpus} GPUs</source>
        <translation>{live}/%n 台主机在线，{gpus} 个 GPU</translation>
    </message>
    <message>
        <source>%n unreadable line(s) skipped</source>
        <translation>已跳过 %n 行无法读取的输出</translation>
    </message>
    <message>
        <source>Host counters arrive with the first slow poll.</source>
        <translation>主机计数器将在第一次慢速轮询后显示。</translation>
    </message>
    <message>
        <source>Processes ({n})</source>
        <translation>进程（{n}）</translation>
    </message>
    <message>
        <source>load {value}</source>
        <translation>负载 {value}</translation>
    </message>
    <message>
        <source>CPU {value} %</source>
        <translation>CPU 占用 {value} %</translation>
    </message>
    <message>
        <source>iowait {value} %</source>
        <translation>IO 等待 {value} %</translation>
    </message>
    <message>
        <source>disk read {value} MB/s</source>
        <translation>磁盘读 {value} MB/s</translation>
    </message>
    <message>
        <source>write {value} MB/s</source>
        <translation>写 {value} MB/s</translation>
    </message>
    <message>
        <source>free disk {value} GiB</source>
        <translation>磁盘剩余 {value} GiB</translation>
    </message>
    <message>
        <source>at {time}</source>
        <translation>更新于 {time}</translation>
    </message>
    <message>
        <source>Host: {counters}</source>
        <translation>主机：{counters}</translation>
    </message>
</context>
<context>
    <name>MonitorTables</name>
    <message>
        <source>ok</source>
        <translation>正常</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <source>Util.</source>
        <translation>利用率</translation>
    </message>
    <message>
        <source>Memory (MiB)</source>
        <translation>显存（MiB）</translation>
    </message>
    <message>
        <source>Temp.</source>
        <translation>温度</translation>
    </message>
    <message>
        <source>Power (W)</source>
        <translation>功耗（W）</translation>
    </message>
    <message>
        <source>SM clock</source>
        <translation>SM 频率</translation>
    </message>
    <message>
        <source>P-state</source>
        <translation>性能状态</translation>
    </message>
    <message>
        <source>Fan</source>
        <translation>风扇</translation>
    </message>
    <message>
        <source>State</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>hidden</source>
        <translation>已隐藏</translation>
    </message>
    <message>
        <source>PID</source>
        <translation>进程 ID</translation>
    </message>
    <message>
        <source>Process</source>
        <translation>进程</translation>
    </message>
    <message>
        <source>Memory</source>
        <translation>显存</translation>
    </message>
</context>
</TS>

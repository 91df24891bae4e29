<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>ChecklistModel</name>
    <message>
        <source>not run</source>
        <translation>未检查</translation>
    </message>
    <message>
        <source>running</source>
        <translation>检查中</translation>
    </message>
    <message>
        <source>passed</source>
        <translation>已通过</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>未通过</translation>
    </message>
    <message>
        <source>stale</source>
        <translation>已过时</translation>
    </message>
    <message>
        <source>Item</source>
        <translation>清单项</translation>
    </message>
    <message>
        <source>State</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>Evidence</source>
        <translation>依据</translation>
    </message>
    <message>
        <source>Checked</source>
        <translation>检查时间</translation>
    </message>
    <message>
        <source>Released, checklist passed</source>
        <translation>已释放，备份清单已通过</translation>
    </message>
    <message>
        <source>Released anyway</source>
        <translation>已强制释放</translation>
    </message>
    <message>
        <source>The provider refused, host kept</source>
        <translation>平台拒绝了释放请求，主机保留</translation>
    </message>
    <message>
        <source>Not confirmed by the provider, host kept and metered</source>
        <translation>平台未确认释放，主机保留并继续计时</translation>
    </message>
    <message>
        <source>Auto-release countdown started</source>
        <translation>自动释放倒计时已开始</translation>
    </message>
    <message>
        <source>Working again, countdown stopped</source>
        <translation>重新开始工作，倒计时已停止</translation>
    </message>
    <message>
        <source>Keep running</source>
        <translation>保持运行</translation>
    </message>
    <message>
        <source>Countdown snoozed</source>
        <translation>倒计时已推迟</translation>
    </message>
    <message>
        <source>Auto-release held back, checklist not passed</source>
        <translation>自动释放已暂缓，备份清单未通过</translation>
    </message>
    <message>
        <source>Stopped automatically, checklist passed</source>
        <translation>已自动关机，备份清单已通过</translation>
    </message>
    <message>
        <source>Auto-release failed</source>
        <translation>自动释放失败</translation>
    </message>
    <message>
        <source>idle</source>
        <translation>空闲</translation>
    </message>
    <message>
        <source>stalled</source>
        <translation>停滞</translation>
    </message>
    <message>
        <source>job finished</source>
        <translation>任务已结束</translation>
    </message>
    <message>
        <source>past the planned end</source>
        <translation>已超过计划结束时间</translation>
    </message>
    <message>
        <source>budget reached</source>
        <translation>已达预算</translation>
    </message>
    <message>
        <source>unattended too long</source>
        <translation>无人值守过久</translation>
    </message>
    <message>
        <source>reason: {reason}</source>
        <translation>原因：{reason}</translation>
    </message>
    <message>
        <source>not passed: {items}</source>
        <translation>未通过：{items}</translation>
    </message>
    <message>
        <source>evidence of {n} items</source>
        <translation>{n} 个清单项的依据</translation>
    </message>
    <message>
        <source>Command output:</source>
        <translation>命令输出：</translation>
    </message>
    <message>
        <source>All {total} items passed: ready to release.</source>
        <translation>全部 {total} 个清单项已通过，可以释放实例。</translation>
    </message>
    <message>
        <source>, </source>
        <comment>between the items of a list</comment>
        <translation>；</translation>
    </message>
    <message>
        <source>{item}: {state}</source>
        <translation>{item}：{state}</translation>
    </message>
    <message>
        <source>Release is blocked: {blocked} of {total} items not passed ({items}).</source>
        <translation>无法释放：{total} 个清单项中有 {blocked} 个未通过（{items}）。</translation>
    </message>
</context>
<context>
    <name>ChecklistSettingsDialog</name>
    <message>
        <source>Release checklist of {host}</source>
        <translation>{host} 的备份清单</translation>
    </message>
    <message>
        <source>Built-in items</source>
        <translation>内置清单项</translation>
    </message>
    <message>
        <source>Project</source>
        <translation>项目</translation>
    </message>
    <message>
        <source>Precision</source>
        <translation>精度</translation>
    </message>
    <message>
        <source>one remote directory a line, e.g. ~/runs/ckpt</source>
        <translation>每行一个远程目录，例如 ~/runs/ckpt</translation>
    </message>
    <message>
        <source>Checkpoint dirs</source>
        <translation>检查点目录</translation>
    </message>
    <message>
        <source>weights, logs, config, scripts</source>
        <translation>权重、日志、配置、脚本</translation>
    </message>
    <message>
        <source>Archive paths</source>
        <translation>归档路径</translation>
    </message>
    <message>
        <source>Scan for leftovers in</source>
        <translation>扫描遗留文件的目录</translation>
    </message>
    <message>
        <source>Size threshold</source>
        <translation>大小阈值</translation>
    </message>
    <message>
        <source>e.g. Data disk snapshot taken</source>
        <translation>例如：已创建数据盘快照</translation>
    </message>
    <message>
        <source>Confirmations</source>
        <translation>人工确认项</translation>
    </message>
    <message>
        <source>label: command exiting 0</source>
        <translation>名称: 成功时退出码为 0 的命令</translation>
    </message>
    <message>
        <source>Custom checks</source>
        <translation>自定义检查</translation>
    </message>
    <message>
        <source>command-line fragments to ignore</source>
        <translation>要忽略的命令行片段</translation>
    </message>
    <message>
        <source>Ignore processes</source>
        <translation>忽略的进程</translation>
    </message>
    <message>
        <source>Release at the provider</source>
        <translation>在平台上释放实例</translation>
    </message>
    <message>
        <source>Write custom checks as &apos;label: command&apos;: {line}</source>
        <translation>自定义检查请写成“名称: 命令”的格式：{line}</translation>
    </message>
</context>
<context>
    <name>CountdownBanners</name>
    <message>
        <source>Keep running</source>
        <translation>保持运行</translation>
    </message>
    <message>
        <source>Release now</source>
        <translation>立即释放</translation>
    </message>
    <message>
        <source>Snooze 30 min</source>
        <translation>推迟 30 分钟</translation>
    </message>
    <message>
        <source>Working on your answer …</source>
        <translation>正在处理你的选择…</translation>
    </message>
    <message>
        <source>The backup checklist is running now; Keep running still stops it.</source>
        <translation>备份清单正在检查中；点击“保持运行”仍可阻止释放。</translation>
    </message>
    <message>
        <source>The provider was asked; reading the instance back …</source>
        <translation>已向平台发出释放请求，正在回读实例状态…</translation>
    </message>
    <message>
        <source>{time} left, then the backup checklist runs unattended.</source>
        <translation>还剩 {time}，之后将在无人值守下检查备份清单。</translation>
    </message>
    <message>
        <source>Next check in {time}.</source>
        <translation>{time} 后再次检查。</translation>
    </message>
</context>
<context>
    <name>OverrideDialog</name>
    <message>
        <source>Release {host} anyway</source>
        <translation>强制释放 {host}</translation>
    </message>
    <message>
        <source>These items have not passed; releasing now may destroy work that exists nowhere else:</source>
        <translation>以下清单项未通过；现在释放可能会永久销毁别处没有副本的成果：</translation>
    </message>
    <message>
        <source>(none)</source>
        <translation>（无）</translation>
    </message>
    <message>
        <source>Type {host} to confirm</source>
        <translation>输入 {host} 以确认</translation>
    </message>
    <message>
        <source>Why is it safe to release now?</source>
        <translation>为什么现在释放是安全的？</translation>
    </message>
    <message>
        <source>Reason</source>
        <translation>原因</translation>
    </message>
    <message>
        <source>Release anyway</source>
        <translation>强制释放</translation>
    </message>
</context>
<context>
    <name>PolicyDialog</name>
    <message>
        <source>Auto-release of {host}</source>
        <translation>{host} 的自动释放</translation>
    </message>
    <message>
        <source>Release {host} for me when it wastes money</source>
        <translation>{host} 空耗费用时自动释放</translation>
    </message>
    <message>
        <source> min</source>
        <comment>spin box suffix</comment>
        <translation> 分钟</translation>
    </message>
    <message>
        <source> % of its power limit</source>
        <translation> % 的功耗上限</translation>
    </message>
    <message>
        <source>e.g. train (empty: not watched)</source>
        <translation>例如 train（留空：不监视）</translation>
    </message>
    <message>
        <source> h</source>
        <comment>spin box suffix</comment>
        <translation> 小时</translation>
    </message>
    <message>
        <source>when a budget that covers it is used up</source>
        <translation>包含此主机的预算用完时</translation>
    </message>
    <message>
        <source>Release (destroy) the instance</source>
        <translation>释放（销毁）实例</translation>
    </message>
    <message>
        <source>Stop it (the disk keeps billing)</source>
        <translation>关机（磁盘仍继续计费）</translation>
    </message>
    <message>
        <source>Idle: every GPU idle for</source>
        <translation>空闲：所有 GPU 空闲持续</translation>
    </message>
    <message>
        <source>   idle means utilisation under</source>
        <translation>   空闲指利用率低于</translation>
    </message>
    <message>
        <source>   and power under</source>
        <translation>   且功耗低于</translation>
    </message>
    <message>
        <source>Stalled: for</source>
        <translation>停滞：持续</translation>
    </message>
    <message>
        <source>   utilisation at least (at idle power)</source>
        <translation>   利用率不低于（功耗处于空闲水平时）</translation>
    </message>
    <message>
        <source>Finished: when this tmux session ends</source>
        <translation>已结束：此 tmux 会话结束时</translation>
    </message>
    <message>
        <source>Planned end passed by</source>
        <translation>超过计划结束时间</translation>
    </message>
    <message>
        <source>Act regardless after, unattended</source>
        <translation>无人值守超过此时长后一律执行</translation>
    </message>
    <message>
        <source>Budget:</source>
        <translation>预算：</translation>
    </message>
    <message>
        <source>Countdown before acting</source>
        <translation>执行前倒计时</translation>
    </message>
    <message>
        <source>Then</source>
        <translation>然后</translation>
    </message>
    <message>
        <source>0 switches a rule off. A rule that holds first shows a countdown with Keep running, Release now and Snooze; then the backup checklist runs unattended, and the instance is released only when every item passes and none is stale. Otherwise it keeps running and you are told what failed.</source>
        <translation>设为 0 即关闭该规则。规则触发后先显示倒计时，可选“保持运行”“立即释放”或“推迟”；倒计时结束后将无人值守地检查备份清单，只有所有清单项都通过且没有过时的依据时才会释放实例。否则实例保持运行，并告诉你哪些项未通过。</translation>
    </message>
</context>
<context>
    <name>PolicySummary</name>
    <message>
        <source>Auto-release: off</source>
        <translation>自动释放：关闭</translation>
    </message>
    <message>
        <source>idle {n} min</source>
        <translation>空闲 {n} 分钟</translation>
    </message>
    <message>
        <source>stalled {n} min</source>
        <translation>停滞 {n} 分钟</translation>
    </message>
    <message>
        <source>tmux &apos;{session}&apos; ended</source>
        <translation>tmux 会话“{session}”结束</translation>
    </message>
    <message>
        <source>planned end + {n} min</source>
        <translation>计划结束时间 + {n} 分钟</translation>
    </message>
    <message>
        <source>unattended {n} h</source>
        <translation>无人值守 {n} 小时</translation>
    </message>
    <message>
        <source>budget used up</source>
        <translation>预算用完</translation>
    </message>
    <message>
        <source>Auto-stop: on ({rules}); {n} min notice, only when the checklist passes</source>
        <translation>自动关机：开启（{rules}）；提前 {n} 分钟提醒，仅在备份清单通过时执行</translation>
    </message>
    <message>
        <source>Auto-release: on ({rules}); {n} min notice, only when the checklist passes</source>
        <translation>自动释放：开启（{rules}）；提前 {n} 分钟提醒，仅在备份清单通过时执行</translation>
    </message>
    <message>
        <source>, </source>
        <comment>between the rules of a list</comment>
        <translation>，</translation>
    </message>
</context>
<context>
    <name>ProviderCommandBox</name>
    <message>
        <source>Placeholders: {instance_id}, {alias}, {hostname}, {port}, {user}. A release counts once the verify command&apos;s output says the instance is gone.</source>
        <translation>占位符：{instance_id}、{alias}、{hostname}、{port}、{user}。只有在核验命令的输出表明实例已不存在时，才算释放成功。</translation>
    </message>
    <message>
        <source>running</source>
        <translation>运行中</translation>
    </message>
    <message>
        <source>starting</source>
        <translation>启动中</translation>
    </message>
    <message>
        <source>stopped</source>
        <translation>已关机</translation>
    </message>
    <message>
        <source>gone</source>
        <translation>已不存在</translation>
    </message>
    <message>
        <source>other</source>
        <translation>其他状态</translation>
    </message>
    <message>
        <source>(no release command)</source>
        <translation>（未设置释放命令）</translation>
    </message>
    <message>
        <source>Release would run: {argv}</source>
        <translation>释放时将运行：{argv}</translation>
    </message>
    <message>
        <source>Nothing was released or stopped.</source>
        <translation>未释放任何实例，也未关机。</translation>
    </message>
    <message>
        <source>No verify command is set: the release could never be confirmed.</source>
        <translation>未设置核验命令：释放将永远无法得到确认。</translation>
    </message>
    <message>
        <source>Verify call: {argv} (exit {code}):</source>
        <translation>验证调用：{argv}（退出码 {code}）：</translation>
    </message>
    <message>
        <source>(no output)</source>
        <translation>（无输出）</translation>
    </message>
    <message>
        <source>{provider} has no instance {instance} (it reports it gone).</source>
        <translation>{provider} 上没有实例 {instance}（平台报告它已不存在）。</translation>
    </message>
    <message>
        <source>{state} ({provider} says {said})</source>
        <translation>{state}（{provider} 显示为 {said}）</translation>
    </message>
    <message>
        <source>{provider} reports instance {instance}: {state}.</source>
        <translation>{provider} 报告实例 {instance}：{state}。</translation>
    </message>
    <message>
        <source>{n}× {gpu}.</source>
        <translation>{n}× {gpu}。</translation>
    </message>
    <message>
        <source>{price}/h while running.</source>
        <translation>运行时 {price}/小时。</translation>
    </message>
    <message>
        <source>Released through the {provider} API account ({platform}): the instance is read back until the provider reports it gone.</source>
        <translation>通过 {provider} API 账户（{platform}）释放：会持续回读实例，直到平台报告它已不存在。</translation>
    </message>
    <message>
        <source>Check the account</source>
        <translation>检查账户</translation>
    </message>
    <message>
        <source>No provider account for this platform: its own commands release it (or, with none, you release the instance in the provider&apos;s console).</source>
        <translation>此平台没有平台账户：由平台自己的命令释放实例（若未设置命令，需要你在平台控制台手动释放实例）。</translation>
    </message>
    <message>
        <source>Test the command</source>
        <translation>测试命令</translation>
    </message>
    <message>
        <source>Release command</source>
        <translation>释放命令</translation>
    </message>
    <message>
        <source>Verify command (read-only)</source>
        <translation>核验命令（只读）</translation>
    </message>
    <message>
        <source>Output once gone</source>
        <translation>已释放时的输出</translation>
    </message>
    <message>
        <source>Output while running</source>
        <translation>运行中的输出</translation>
    </message>
    <message>
        <source>Instance id of {host}: {instance} (Hosts page → Edit host).</source>
        <translation>{host} 的实例 ID：{instance}（主机页 → 编辑主机）。</translation>
    </message>
    <message>
        <source>{host} has no instance id yet: add it with Edit host on the Hosts page (it is in the provider&apos;s console), or sync the provider account.</source>
        <translation>{host} 还没有实例 ID：请在主机页用“编辑主机”填写（可在平台控制台中找到），或同步平台账户。</translation>
    </message>
    <message>
        <source>e.g. mycloud delete {instance_id} --yes</source>
        <translation>例如 mycloud delete {instance_id} --yes</translation>
    </message>
    <message>
        <source>read-only, e.g. mycloud show {instance_id}</source>
        <translation>只读命令，例如 mycloud show {instance_id}</translation>
    </message>
    <message>
        <source>e.g. not found</source>
        <translation>例如 not found</translation>
    </message>
    <message>
        <source>e.g. RUNNING</source>
        <translation>例如 RUNNING</translation>
    </message>
    <message>
        <source>Testing …</source>
        <translation>正在测试…</translation>
    </message>
    <message>
        <source>{host} has no instance id: nothing to read back. Add it with Edit host, or sync the provider account.</source>
        <translation>{host} 没有实例 ID：无法回读。请用“编辑主机”填写，或同步平台账户。</translation>
    </message>
    <message>
        <source>Asking {provider} about instance {instance} …</source>
        <translation>正在向 {provider} 查询实例 {instance}…</translation>
    </message>
    <message>
        <source>The account could not be read: {error}</source>
        <translation>无法读取账户：{error}</translation>
    </message>
    <message>
        <source>The command cannot run: {error}</source>
        <translation>命令无法运行：{error}</translation>
    </message>
    <message>
        <source>The test failed: {error}</source>
        <translation>测试失败：{error}</translation>
    </message>
</context>
<context>
    <name>ReleaseFlow</name>
    <message>
        <source>release</source>
        <translation>正常释放</translation>
    </message>
    <message>
        <source>override</source>
        <translation>强制释放</translation>
    </message>
    <message>
        <source>Re-checking what changed on {host} …</source>
        <translation>正在重新检查 {host} 上有变化的项…</translation>
    </message>
    <message>
        <source>Release anyway {host}?</source>
        <translation>强制释放 {host}？</translation>
    </message>
    <message>
        <source>Release {host}?</source>
        <translation>释放 {host}？</translation>
    </message>
    <message>
        <source>This will:</source>
        <translation>将会：</translation>
    </message>
    <message>
        <source>Something changed on the host and no longer passes: see the items marked failed.</source>
        <translation>主机上有内容发生了变化，已不再通过：请查看标记为“未通过”的清单项。</translation>
    </message>
    <message>
        <source>Asking {provider} to destroy instance {instance} of {host}, then reading it back …</source>
        <translation>正在请求 {provider} 销毁 {host} 的实例 {instance}，随后回读确认…</translation>
    </message>
    <message>
        <source>{host} released ({kind}); its history stays on this page.</source>
        <translation>{host} 已释放（{kind}）；其记录保留在此页面。</translation>
    </message>
    <message>
        <source>Dismiss a file</source>
        <translation>忽略文件</translation>
    </message>
    <message>
        <source>File:</source>
        <translation>文件：</translation>
    </message>
    <message>
        <source>Why can {path} be left behind?</source>
        <translation>为什么可以把 {path} 留在实例上不带走？</translation>
    </message>
</context>
<context>
    <name>ReleasePage</name>
    <message>
        <source>released</source>
        <translation>已释放</translation>
    </message>
    <message>
        <source>stopped</source>
        <translation>已关机</translation>
    </message>
    <message>
        <source>gone at the provider</source>
        <translation>平台上已不存在</translation>
    </message>
    <message>
        <source>No instance to release</source>
        <translation>没有可释放的实例</translation>
    </message>
    <message>
        <source>Before you release a rented instance, its backup checklist must pass here: checkpoints synced, artefacts archived, nothing left behind, no work running. Add a host to start.</source>
        <translation>释放租用的实例之前，必须先在这里通过它的备份清单：检查点已同步、成果已归档、没有遗留文件、没有仍在运行的任务。请先添加主机。</translation>
    </message>
    <message>
        <source>Add a host</source>
        <translation>添加主机</translation>
    </message>
    <message>
        <source>Host</source>
        <translation>主机</translation>
    </message>
    <message>
        <source>Checklist settings…</source>
        <translation>清单设置…</translation>
    </message>
    <message>
        <source>Run all</source>
        <translation>全部检查</translation>
    </message>
    <message>
        <source>Auto-release…</source>
        <translation>自动释放…</translation>
    </message>
    <message>
        <source>Check again</source>
        <translation>重新检查</translation>
    </message>
    <message>
        <source>Fix</source>
        <translation>修复</translation>
    </message>
    <message>
        <source>Confirm…</source>
        <translation>确认…</translation>
    </message>
    <message>
        <source>Dismiss a file…</source>
        <translation>忽略文件…</translation>
    </message>
    <message>
        <source>Cancel copy</source>
        <translation>取消复制</translation>
    </message>
    <message>
        <source>Cancel the transfer job; what arrived is kept and resumes.</source>
        <translation>取消传输任务；已传输的部分会保留，之后可断点续传。</translation>
    </message>
    <message>
        <source>Release anyway…</source>
        <translation>强制释放…</translation>
    </message>
    <message>
        <source>Release</source>
        <translation>释放实例</translation>
    </message>
    <message>
        <source>History</source>
        <translation>历史记录</translation>
    </message>
    <message>
        <source>{alias} ({state})</source>
        <translation>{alias}（{state}）</translation>
    </message>
    <message>
        <source>No release or override recorded for this host yet.</source>
        <translation>此主机还没有释放或强制释放的记录。</translation>
    </message>
    <message>
        <source>Checking on {host} …</source>
        <translation>正在检查 {host}…</translation>
    </message>
    <message>
        <source>Fixing on {host} …</source>
        <translation>正在修复 {host}…</translation>
    </message>
    <message>
        <source>Looking for changes on {host} …</source>
        <translation>正在查找 {host} 上的变化…</translation>
    </message>
    <message>
        <source>Select an item to see its evidence.</source>
        <translation>选择一个清单项以查看其依据。</translation>
    </message>
    <message>
        <source>Checked: {what}</source>
        <translation>检查内容：{what}</translation>
    </message>
    <message>
        <source>When: {time}</source>
        <translation>时间：{time}</translation>
    </message>
    <message>
        <source>Note (optional):</source>
        <translation>备注（可选）：</translation>
    </message>
    <message>
        <source>Copying from {host}: {progress}</source>
        <translation>正在从 {host} 复制：{progress}</translation>
    </message>
    <message>
        <source>queued</source>
        <translation>排队中</translation>
    </message>
    <message>
        <source>{host} was released; its history is below.</source>
        <translation>{host} 已释放；记录见下方。</translation>
    </message>
    <message>
        <source>{host} is stopped at the provider and its disk still bills: release it anyway to destroy it.</source>
        <translation>{host} 已在平台上关机，但磁盘仍在计费：如需销毁，请强制释放。</translation>
    </message>
    <message>
        <source>{host} is gone at the provider; its history is below.</source>
        <translation>{host} 在平台上已不存在；记录见下方。</translation>
    </message>
</context>
<context>
    <name>ReleasePlan</name>
    <message>
        <source>nothing is sent to a provider: release the instance in its console yourself</source>
        <translation>不会向平台发送任何请求：请你自己在平台控制台释放实例</translation>
    </message>
    <message>
        <source>end the rental&apos;s meter</source>
        <translation>在账本中结束该租用的计时</translation>
    </message>
    <message>
        <source>record the evidence</source>
        <translation>记录依据</translation>
    </message>
    <message>
        <source>mark the host released and drop its ssh config block</source>
        <translation>将主机标记为已释放，并删除它的 ssh 配置块</translation>
    </message>
    <message>
        <source>end the rental&apos;s meter only once {provider} confirms</source>
        <translation>{provider} 确认后才在账本中结束该租用的计时</translation>
    </message>
    <message>
        <source>the platform</source>
        <translation>该平台</translation>
    </message>
    <message>
        <source>{host} has no instance id, so {provider} cannot be asked to destroy it.</source>
        <translation>{host} 没有实例 ID，因此无法请求 {provider} 销毁它。</translation>
    </message>
    <message>
        <source>Edit the host and paste the instance id from the provider&apos;s console, or sync the provider account.</source>
        <translation>请编辑主机，填入平台控制台中的实例 ID，或同步平台账户。</translation>
    </message>
</context>
</TS>

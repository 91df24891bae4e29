<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>App</name>
    <message>
        <source>GPU Companion — unexpected error</source>
        <translation>GPU Companion — 意外错误</translation>
    </message>
    <message>
        <source>Something went wrong: {error}

Nothing was lost. The details are in the log file:
{log}</source>
        <translation>出错了：{error}

没有丢失任何数据。详细信息在日志文件中：
{log}</translation>
    </message>
    <message>
        <source>GPU Companion is already running: its window was brought forward.</source>
        <translation>GPU Companion 已在运行：已将它的窗口切换到前台。</translation>
    </message>
    <message>
        <source>GPU Companion is already running on {path} but does not answer; end that process (or wait for it) and start again.</source>
        <translation>GPU Companion 已在 {path} 上运行，但没有响应；请结束该进程（或等它结束）后再启动。</translation>
    </message>
    <message>
        <source>GPU Companion could not start: {error}
Log: {log}</source>
        <translation>GPU Companion 无法启动：{error}
日志：{log}</translation>
    </message>
    <message>
        <source>{error}

Log: {log}</source>
        <translation>{error}

日志：{log}</translation>
    </message>
</context>
<context>
    <name>MainWindow</name>
    <message>
        <source>Main</source>
        <translation>主工具栏</translation>
    </message>
    <message>
        <source>First-rental wizard</source>
        <translation>首次租用向导</translation>
    </message>
    <message>
        <source>Ready</source>
        <translation>就绪</translation>
    </message>
    <message>
        <source>Still running in the tray: a rental is being metered.</source>
        <translation>仍在托盘中运行：有租用正在计费。</translation>
    </message>
    <message>
        <source>Close GPU Companion?</source>
        <translation>关闭 GPU Companion？</translation>
    </message>
    <message>
        <source>Quit GPU Companion?</source>
        <translation>退出 GPU Companion？</translation>
    </message>
    <message>
        <source>Quit anyway</source>
        <translation>仍然退出</translation>
    </message>
</context>
<context>
    <name>OrphanBanner</name>
    <message>
        <source>Review…</source>
        <translation>查看…</translation>
    </message>
</context>
<context>
    <name>Sidebar</name>
    <message>
        <source>Hosts</source>
        <translation>主机</translation>
    </message>
    <message>
        <source>Keys</source>
        <translation>密钥</translation>
    </message>
    <message>
        <source>Monitor</source>
        <translation>监控</translation>
    </message>
    <message>
        <source>Transfers</source>
        <translation>传输</translation>
    </message>
    <message>
        <source>Release</source>
        <translation>释放</translation>
    </message>
    <message>
        <source>Runs</source>
        <translation>任务</translation>
    </message>
    <message>
        <source>Spend</source>
        <translation>花费</translation>
    </message>
    <message>
        <source>Settings</source>
        <translation>设置</translation>
    </message>
</context>
<context>
    <name>Smoke</name>
    <message>
        <source>system tray</source>
        <translation>系统托盘</translation>
    </message>
    <message>
        <source>in-app banners (no system tray)</source>
        <translation>窗口内横幅（没有系统托盘）</translation>
    </message>
    <message>
        <source>FAILED</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>ok</source>
        <translation>正常</translation>
    </message>
    <message>
        <source>smoke test: {pages} pages rendered, alerts via {tray}: {verdict}</source>
        <translation>冒烟测试：已渲染 {pages} 个页面，提醒经由{tray}：{verdict}</translation>
    </message>
</context>
<context>
    <name>Tray</name>
    <message>
        <source>GPU Companion — forgotten instance</source>
        <translation>GPU Companion — 遗忘的实例</translation>
    </message>
    <message>
        <source>GPU Companion — spend</source>
        <translation>GPU Companion — 花费</translation>
    </message>
    <message>
        <source>GPU Companion — nothing running</source>
        <translation>GPU Companion — 无运行中的实例</translation>
    </message>
    <message>
        <source>Open GPU Companion</source>
        <translation>打开 GPU Companion</translation>
    </message>
    <message>
        <source>{rental} · auto-release pending</source>
        <translation>{rental} · 待自动释放</translation>
    </message>
    <message>
        <source>Open the monitor</source>
        <translation>打开监控</translation>
    </message>
    <message>
        <source>Release checklist</source>
        <translation>释放清单</translation>
    </message>
    <message>
        <source>Snooze its alerts for 1 hour</source>
        <translation>提醒暂停 1 小时</translation>
    </message>
    <message>
        <source>Mute its alerts</source>
        <translation>静音提醒</translation>
    </message>
    <message>
        <source>Spend</source>
        <translation>花费</translation>
    </message>
    <message>
        <source>Quit</source>
        <translation>退出</translation>
    </message>
</context>
<context>
    <name>TrayModel</name>
    <message>
        <source>nothing running</source>
        <translation>无运行中的实例</translation>
    </message>
    <message>
        <source>running within budget</source>
        <translation>运行中，未超预算</translation>
    </message>
    <message>
        <source>budget warning</source>
        <translation>预算预警</translation>
    </message>
    <message>
        <source>over budget</source>
        <translation>超出预算</translation>
    </message>
    <message>
        <source>Budget warning</source>
        <translation>预算预警</translation>
    </message>
    <message>
        <source>Over budget</source>
        <translation>超出预算</translation>
    </message>
    <message>
        <source>Today: {totals}</source>
        <translation>今日：{totals}</translation>
    </message>
    <message>
        <source>{running} running, {stopped} stopped, {burn}</source>
        <translation>{running} 台运行中，{stopped} 台已关机，{burn}</translation>
    </message>
    <message>
        <source>{running} running, {stopped} stopped, not billed</source>
        <translation>{running} 台运行中，{stopped} 台已关机，未计费</translation>
    </message>
    <message>
        <source>{running} running, {burn}</source>
        <translation>{running} 台运行中，{burn}</translation>
    </message>
    <message>
        <source>{running} running, not billed</source>
        <translation>{running} 台运行中，未计费</translation>
    </message>
    <message>
        <source>{name} (stopped: disk billed) · {elapsed} · {cost}</source>
        <translation>{name}（已关机，磁盘仍计费）· {elapsed} · {cost}</translation>
    </message>
    <message>
        <source>{name} · {elapsed} · {cost}</source>
        <translation>{name} · {elapsed} · {cost}</translation>
    </message>
</context>
<context>
    <name>WelcomeDialog</name>
    <message>
        <source>System keyring</source>
        <translation>系统密钥环</translation>
    </message>
    <message>
        <source>Welcome to GPU Companion</source>
        <translation>欢迎使用 GPU Companion</translation>
    </message>
    <message>
        <source>&lt;h3&gt;Welcome to GPU Companion&lt;/h3&gt;&lt;p&gt;It keeps a rented GPU safe and visible from the first hour to the bill: one SSH key per platform in your system keyring, live GPU graphs, resumable transfers, a release gate that waits for your backups, and a spend ledger.&lt;/p&gt;&lt;p&gt;New to renting? The wizard sizes the job and picks a card and a billing mode. Already have an instance? Add it on the Hosts page.&lt;/p&gt;</source>
        <translation>&lt;h3&gt;欢迎使用 GPU Companion&lt;/h3&gt;&lt;p&gt;从租用的第一个小时到最后的账单，它让租用的 GPU 安全、状态一目了然：每个平台一把 SSH 密钥，保存在系统密钥环中；实时 GPU 图表；断点续传；等备份完成才放行的释放检查；还有花费账本。&lt;/p&gt;&lt;p&gt;第一次租用？向导会估算任务所需配置，帮你选好 GPU 型号和计费方式。已经有实例了？在“主机”页面添加即可。&lt;/p&gt;</translation>
    </message>
    <message>
        <source>This computer</source>
        <translation>本机</translation>
    </message>
    <message>
        <source>Checking…</source>
        <translation>正在检查…</translation>
    </message>
    <message>
        <source>Plan a rental with the wizard</source>
        <translation>用向导规划租用</translation>
    </message>
    <message>
        <source>Go to Hosts</source>
        <translation>前往主机页</translation>
    </message>
    <message>
        <source>Check again</source>
        <translation>重新检查</translation>
    </message>
    <message>
        <source>Checking the keyring, ssh, ssh-agent and rsync…</source>
        <translation>正在检查系统密钥环、ssh、ssh-agent 和 rsync…</translation>
    </message>
    <message>
        <source>The check itself failed: {error}</source>
        <translation>检查本身出错：{error}</translation>
    </message>
    <message>
        <source>Everything GPU Companion needs is here.</source>
        <translation>GPU Companion 所需的一切均已就绪。</translation>
    </message>
    <message>
        <source>, </source>
        <translation>、</translation>
    </message>
    <message>
        <source>%n thing to fix: {names}. The rest of the app works meanwhile.</source>
        <translation>%n 项需要修复：{names}。应用的其他功能仍可照常使用。</translation>
    </message>
    <message>
        <source>%n things to fix: {names}. The rest of the app works meanwhile.</source>
        <translation>%n 项需要修复：{names}。应用的其他功能仍可照常使用。</translation>
    </message>
</context>
</TS>

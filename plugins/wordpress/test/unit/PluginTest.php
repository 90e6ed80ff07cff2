<?php
/**
 * The front-end hooks: when a bot's fetch is reported and the SDK printed.
 *
 * @package StrataAnalytics
 */

use PHPUnit\Framework\TestCase;

final class PluginTest extends TestCase {

	const BOT   = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)';
	const HUMAN = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

	protected function setUp(): void {
		WP_Stubs::reset();
		WP_Stubs::$options = array(
			Strata_Analytics_Settings::API_KEY => WP_Stubs::KEY,
			Strata_Analytics_Settings::HOST    => 'https://analytics.example.com',
		);
		$this->request( self::BOT );
	}

	/** Sets up $_SERVER as WordPress leaves it: with slashes added. */
	private function request( $ua, $method = 'GET' ) {
		$_SERVER['HTTP_USER_AGENT'] = addslashes( $ua );
		$_SERVER['REQUEST_METHOD']  = $method;
		$_SERVER['REQUEST_URI']     = '/hello-world/?utm_source=chatgpt.com';
		$_SERVER['HTTP_REFERER']    = 'https://chatgpt.com/';
		// The bot is looked up once per request; each test is one.
		$bot = new ReflectionProperty( Strata_Analytics_Plugin::class, 'bot' );
		$bot->setAccessible( true );
		$bot->setValue( null, null );
	}

	public function test_reports_a_bot_fetch() {
		Strata_Analytics_Plugin::report_bot();
		$this->assertCount( 1, WP_Stubs::$posts );
		list( $url, $args ) = WP_Stubs::$posts[0];
		$this->assertSame( 'https://analytics.example.com/e', $url );
		$this->assertFalse( $args['blocking'] );
		$event = json_decode( $args['body'], true )['batch'][0];
		$this->assertSame( '$pageview', $event['event_name'] );
		$this->assertSame( self::BOT, $event['user_agent'] );
		$this->assertSame( 'https://blog.example.com/hello-world/?utm_source=chatgpt.com', $event['url'] );
		$this->assertSame( 'https://chatgpt.com/', $event['referrer'] );
	}

	/** WordPress's added slashes are taken off the user agent before it is sent. */
	public function test_unslashes_the_user_agent() {
		$this->request( 'GPTBot/1.0 (+"quoted" \\ path)' );
		Strata_Analytics_Plugin::report_bot();
		$event = json_decode( WP_Stubs::$posts[0][1]['body'], true )['batch'][0];
		$this->assertSame( 'GPTBot/1.0 (+"quoted" \\ path)', $event['user_agent'] );
	}

	public function test_never_for_people() {
		foreach ( array( self::HUMAN, '', 'curl/8.5.0', 'Mozilla/5.0 (compatible; Googlebot/2.1)', str_repeat( 'GPTBot ', 400 ) ) as $ua ) {
			$this->request( $ua );
			Strata_Analytics_Plugin::report_bot();
		}
		$this->assertCount( 0, WP_Stubs::$posts );
	}

	/** @dataProvider not_pages */
	public function test_never_outside_front_end_pages( $context ) {
		WP_Stubs::$is[ $context ] = true;
		Strata_Analytics_Plugin::report_bot();
		$this->assertCount( 0, WP_Stubs::$posts );
	}

	public function not_pages() {
		return array(
			'admin'     => array( 'admin' ),
			'AJAX'      => array( 'ajax' ),
			'cron'      => array( 'cron' ),
			'feed'      => array( 'feed' ),
			'robots'    => array( 'robots' ),
			'trackback' => array( 'trackback' ),
			'favicon'   => array( 'favicon' ),
		);
	}

	public function test_only_for_get() {
		foreach ( array( 'HEAD', 'POST', 'OPTIONS' ) as $method ) {
			$this->request( self::BOT, $method );
			Strata_Analytics_Plugin::report_bot();
		}
		$this->assertCount( 0, WP_Stubs::$posts );
	}

	/**
	 * The REST API is a constant, which cannot be undefined again.
	 *
	 * @runInSeparateProcess
	 * @preserveGlobalState disabled
	 */
	public function test_never_for_the_rest_api() {
		define( 'REST_REQUEST', true );
		Strata_Analytics_Plugin::report_bot();
		$this->assertCount( 0, WP_Stubs::$posts );
	}

	public function test_nothing_when_turned_off_or_unconfigured() {
		WP_Stubs::$options[ Strata_Analytics_Settings::TRACK_BOTS ] = '0';
		Strata_Analytics_Plugin::report_bot();
		WP_Stubs::$options[ Strata_Analytics_Settings::TRACK_BOTS ] = '1';
		WP_Stubs::$options[ Strata_Analytics_Settings::API_KEY ]    = '';
		Strata_Analytics_Plugin::report_bot();
		$this->assertCount( 0, WP_Stubs::$posts );
	}

	/** A failing transport never reaches the page. */
	public function test_failures_stay_inside() {
		WP_Stubs::$post_throws = true;
		Strata_Analytics_Plugin::report_bot();
		$this->assertCount( 0, WP_Stubs::$posts );
	}

	public function test_sdk_for_people() {
		$this->request( self::HUMAN );
		Strata_Analytics_Plugin::enqueue_sdk();
		$script = WP_Stubs::$scripts[ Strata_Analytics_Plugin::SCRIPT ];
		$this->assertSame( 'https://analytics.example.com/sdk/v1/sdk.min.js', $script['src'] );
		$this->assertNull( $script['ver'], 'no ?ver= on the SDK URL' );
		$this->assertSame(
			array( array( 'after', 'window.strata && strata.init({ apiKey: "' . WP_Stubs::KEY . '" });' ) ),
			$script['inline']
		);
	}

	/** A reported bot does not load the SDK too, which could count it twice. */
	public function test_no_sdk_for_reported_bots() {
		Strata_Analytics_Plugin::enqueue_sdk();
		$this->assertSame( array(), WP_Stubs::$scripts );
		// With bot tracking off, a bot that runs scripts is the SDK's to count.
		WP_Stubs::$options[ Strata_Analytics_Settings::TRACK_BOTS ] = '0';
		Strata_Analytics_Plugin::enqueue_sdk();
		$this->assertArrayHasKey( Strata_Analytics_Plugin::SCRIPT, WP_Stubs::$scripts );
	}

	public function test_no_sdk_unconfigured_or_in_admin() {
		$this->request( self::HUMAN );
		WP_Stubs::$is['admin'] = true;
		Strata_Analytics_Plugin::enqueue_sdk();
		WP_Stubs::$is['admin'] = false;
		WP_Stubs::$options[ Strata_Analytics_Settings::HOST ] = '';
		Strata_Analytics_Plugin::enqueue_sdk();
		$this->assertSame( array(), WP_Stubs::$scripts );
	}

	/** The init call cannot close its script element, whatever the key holds. */
	public function test_init_script_escapes() {
		$js = Strata_Analytics_Plugin::init_script( '</script><script>alert(1)</script>' );
		$this->assertStringNotContainsString( '<', $js );
		$this->assertStringContainsString( '\u003C/script\u003E', $js );
	}
}
